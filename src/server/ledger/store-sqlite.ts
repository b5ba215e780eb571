/** The ledger store on SQLite: prepared statements on the driver's connection, one transaction per commit. */
import type Database from "better-sqlite3";
import {
  COLUMN,
  SUMS,
  sumsOf,
  hoursOf,
  hourTotals,
  ENTRY_COLUMNS,
  HOUR_COLUMNS,
  TOTAL_COLUMNS,
  TOTAL_UPSERT,
  HOUR_UPSERT,
  ownersClause,
  entrySumsQuery,
  bulkQueries,
  inBatches,
  modelFitOf,
  modelFitQuery,
  ownerMoveOf,
  ownerSnapshotOf,
  type RawOwnerRow,
  ownerDaysQuery,
  ownerDayOf,
  type RawDay,
  windowSumsQuery,
  filterClause,
  ENTRY_SELECT,
  keysetCursor,
  type Owner,
  type EntryRow,
  type LedgerStore,
  type RawSums,
} from "./store-sql";

export function sqliteStore(conn: () => Database.Database): LedgerStore {
  let statements:
    | {
        insert: Database.Statement;
        hour: Database.Statement;
        cursor: Database.Statement;
        kept: Database.Statement<[number, number, number, number], { at: number; fingerprint: string; n: number }>;
        commit: (owner: Owner, rows: EntryRow[], holder: string, cursor: number) => boolean;
      }
    | undefined;
  const prepared = () => {
    if (statements) return statements;
    const c = conn();
    const insert = c.prepare(
      `INSERT INTO ledger_entries (${ENTRY_COLUMNS}) VALUES (${Array(15).fill("?").join(", ")})`,
    );
    const hour = c.prepare(
      `INSERT INTO ledger_hours (${HOUR_COLUMNS}) VALUES (${Array(10).fill("?").join(", ")}) ${HOUR_UPSERT}`,
    );
    const cursor = c.prepare("UPDATE ledger_sync SET cursor = ? WHERE site_id = ? AND site_user_id = ? AND holder = ?");
    const kept = c.prepare<[number, number, number, number], { at: number; fingerprint: string; n: number }>(
      `SELECT at, fingerprint, COUNT(*) AS n FROM ledger_entries
       WHERE site_id = ? AND site_user_id = ? AND at BETWEEN ? AND ? GROUP BY at, fingerprint`,
    );
    const total = c.prepare(
      `INSERT INTO ledger_hour_totals (${TOTAL_COLUMNS}) VALUES (${Array(8).fill("?").join(", ")}) ${TOTAL_UPSERT}`,
    );
    const held = c.prepare("SELECT 1 FROM ledger_sync WHERE site_id = ? AND site_user_id = ? AND holder = ?");
    const commit = c.transaction((owner: Owner, rows: EntryRow[], holder: string, at: number): boolean => {
      if (held.get(owner.siteId, owner.siteUserId, holder) === undefined) return false;
      cursor.run(at, owner.siteId, owner.siteUserId, holder);
      for (const r of rows) {
        insert.run(
          ...[owner.siteId, owner.siteUserId, r.at, r.fingerprint, r.ordinal, r.type, r.model, r.tokenName, r.quota],
          ...[r.promptTokens, r.completionTokens, r.durationMs, r.stream ? 1 : 0, r.content, r.detail],
        );
      }
      const hours = hoursOf(rows);
      for (const h of hours) hour.run(owner.siteId, owner.siteUserId, ...h);
      for (const t of hourTotals(hours)) total.run(owner.siteId, owner.siteUserId, ...t);
      return true;
    });
    statements = { insert, hour, cursor, kept, commit };
    return statements;
  };
  const bulk = bulkQueries(() => "?", false);
  const query = <T>(sql: string, values: unknown[]) =>
    conn()
      .prepare(sql)
      .all(...values) as T[];
  return {
    keptCopies(owner, from, to) {
      const rows = prepared().kept.all(owner.siteId, owner.siteUserId, from, to);
      return Promise.resolve(new Map(rows.map((r) => [`${r.at} ${r.fingerprint}`, r.n])));
    },
    commit(owner, rows, holder, cursor) {
      return Promise.resolve(prepared().commit(owner, rows, holder, cursor));
    },
    entries(owner, filter, after, limit) {
      const w = filterClause(owner, filter, after, () => "?");
      const rows = conn()
        .prepare(`SELECT ${ENTRY_SELECT} FROM ledger_entries WHERE ${w.sql} ORDER BY at, fingerprint, ordinal LIMIT ?`)
        .all(...w.values, limit) as Array<Omit<EntryRow, "stream"> & { stream: number | boolean }>;
      return Promise.resolve(rows.map((r) => ({ ...r, stream: r.stream === 1 || r.stream === true })));
    },
    openEntries(owner, filter) {
      return keysetCursor((after, limit) => this.entries(owner, filter, after, limit));
    },
    countEntries(owner, filter) {
      const w = filterClause(owner, filter, null, () => "?");
      const row = conn()
        .prepare(`SELECT COUNT(*) AS n FROM ledger_entries WHERE ${w.sql}`)
        .get(...w.values) as {
        n: number;
      };
      return Promise.resolve(row.n);
    },
    pruneBefore(owner, at) {
      const c = conn();
      const result = c.prepare("DELETE FROM ledger_entries WHERE site_id = ? AND site_user_id = ? AND at < ?");
      return Promise.resolve(result.run(owner.siteId, owner.siteUserId, at).changes);
    },
    grouped(owners, range, by) {
      if (owners.length === 0) return Promise.resolve([]);
      const o = ownersClause(owners, () => "?", 0);
      const rows = query<RawSums & { key: string }>(
        `SELECT ${COLUMN[by]} AS key, ${SUMS} FROM ledger_hours WHERE ${o.sql} AND hour >= ? AND hour < ?
         ${range.consumeOnly ? "AND type = 'consume'" : ""} GROUP BY ${COLUMN[by]} ORDER BY SUM(quota) DESC, ${COLUMN[by]}`,
        [...o.values, range.from, range.to],
      );
      return Promise.resolve(rows.map((r) => ({ key: r.key, ...sumsOf(r) })));
    },
    modelFitSums(owner, range) {
      const { sql, values } = modelFitQuery(owner, range, () => "?", "REAL");
      return Promise.resolve(query<Record<string, unknown>>(sql, values).map(modelFitOf));
    },
    lastSnapshots(owners, atMost) {
      if (owners.length === 0) return Promise.resolve([]);
      const { sql, values } = bulk.lastSnapshots(owners, atMost);
      return Promise.resolve(query<RawOwnerRow>(sql, values).map(ownerSnapshotOf));
    },
    snapshotsBetween(owners, after, before) {
      if (owners.length === 0) return Promise.resolve([]);
      const { sql, values } = bulk.snapshotsBetween(owners, after, before);
      return Promise.resolve(query<RawOwnerRow>(sql, values).map(ownerSnapshotOf));
    },
    movesSince(since, upTo) {
      if (since.length === 0) return Promise.resolve([]);
      const { sql, values } = bulk.movesSince(since, upTo);
      return Promise.resolve(query<RawOwnerRow>(sql, values).map(ownerMoveOf));
    },
    topupsSince(since, upTo) {
      if (since.length === 0) return Promise.resolve([]);
      const { sql, values } = bulk.topupsSince(since, upTo);
      return Promise.resolve(query<RawOwnerRow>(sql, values).map(ownerSnapshotOf));
    },
    ownerDays(owners, days) {
      if (owners.length === 0 || days.length === 0) return Promise.resolve([]);
      const { sql, values } = ownerDaysQuery(owners, days, () => "?", false);
      return Promise.resolve(query<RawDay>(sql, values).map(ownerDayOf));
    },
    windowSums(windows) {
      return inBatches(windows, (batch) => {
        const { sql, values } = windowSumsQuery(batch, () => "?", false);
        return Promise.resolve(query<{ i: number; quota: number | null }>(sql, values));
      });
    },
    hourly(owners, range) {
      if (owners.length === 0) return Promise.resolve([]);
      const o = ownersClause(owners, () => "?", 0);
      const rows = query<RawSums & { hour: number }>(
        `SELECT hour, ${SUMS} FROM ledger_hour_totals WHERE ${o.sql} AND hour >= ? AND hour < ?
         ${range.consumeOnly ? "AND type = 'consume'" : ""} GROUP BY hour ORDER BY hour`,
        [...o.values, range.from, range.to],
      );
      return Promise.resolve(rows.map((r) => ({ hour: r.hour, ...sumsOf(r) })));
    },
    entrySums(owners, windows, consumeOnly, by) {
      if (owners.length === 0 || windows.length === 0) return Promise.resolve([]);
      const { sql, values } = entrySumsQuery(owners, windows, consumeOnly, by, () => "?");
      const rows = query<RawSums & { hour: number; key: string }>(sql, values);
      return Promise.resolve(rows.map((r) => ({ hour: Number(r.hour), key: r.key, ...sumsOf(r) })));
    },
    hourlyBy(owners, range, by) {
      if (owners.length === 0) return Promise.resolve([]);
      const o = ownersClause(owners, () => "?", 0);
      const rows = query<RawSums & { hour: number; key: string }>(
        `SELECT hour, ${COLUMN[by]} AS key, ${SUMS} FROM ledger_hours WHERE ${o.sql} AND hour >= ? AND hour < ?
         ${range.consumeOnly ? "AND type = 'consume'" : ""} GROUP BY hour, ${COLUMN[by]} ORDER BY hour`,
        [...o.values, range.from, range.to],
      );
      return Promise.resolve(rows.map((r) => ({ hour: r.hour, key: r.key, ...sumsOf(r) })));
    },
  };
}
