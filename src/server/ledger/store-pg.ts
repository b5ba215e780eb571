/** The ledger store on PostgreSQL: one statement per commit (unnest), keyset pages for exports. */
import type pg from "pg";
import {
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
  filterClause,
  ENTRY_SELECT,
  keysetCursor,
  type EntryRow,
  type LedgerStore,
  type RawSums,
} from "./store-sql";

export function postgresStore(pool: pg.Pool): LedgerStore {
  const bulk = bulkQueries((i) => `$${i + 1}`, true);
  const query = async <T extends pg.QueryResultRow>(sql: string, values: unknown[]) =>
    (await pool.query<T>(sql, values)).rows;
  return {
    async keptCopies(owner, from, to) {
      const rows = await query<{ at: number; fingerprint: string; n: string }>(
        `SELECT at, fingerprint, COUNT(*) AS n FROM ledger_entries
         WHERE site_id = $1 AND site_user_id = $2 AND at BETWEEN $3 AND $4 GROUP BY at, fingerprint`,
        [owner.siteId, owner.siteUserId, from, to],
      );
      return new Map(rows.map((r) => [`${r.at} ${r.fingerprint}`, Number(r.n)]));
    },
    async commit(owner, rows, holder, cursor) {
      // One statement, so one round trip and one transaction: the cursor moves only while the
      // holder holds the lease (the row lock orders it against a takeover), and the entries and
      // their hourly totals are written only if it did.
      const col = <K extends keyof EntryRow>(k: K) => rows.map((r) => r[k]);
      const hours = hoursOf(rows);
      const h = (i: number) => hours.map((x) => x[i]);
      const totals = hourTotals(hours);
      const t = (i: number) => totals.map((x) => x[i]);
      const res = await pool.query<{ held: string }>({
        name: "gd-ledger-commit",
        text: `WITH held AS (
            UPDATE ledger_sync SET cursor = $3 WHERE site_id = $1 AND site_user_id = $2 AND holder = $4 RETURNING 1
          ), entries AS (
            INSERT INTO ledger_entries (${ENTRY_COLUMNS})
            SELECT $1, $2, e.* FROM unnest($5::int[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[],
              $11::bigint[], $12::bigint[], $13::bigint[], $14::int[], $15::bool[], $16::text[], $17::text[]) AS e
            WHERE EXISTS (SELECT 1 FROM held)
          ), hours AS (
            INSERT INTO ledger_hours (${HOUR_COLUMNS})
            SELECT $1, $2, x.* FROM unnest($18::int[], $19::text[], $20::text[], $21::text[], $22::int[],
              $23::bigint[], $24::bigint[], $25::bigint[]) AS x
            WHERE EXISTS (SELECT 1 FROM held)
            ${HOUR_UPSERT}
          ), totals AS (
            INSERT INTO ledger_hour_totals (${TOTAL_COLUMNS})
            SELECT $1, $2, t.* FROM unnest($26::int[], $27::text[], $28::int[], $29::bigint[], $30::bigint[],
              $31::bigint[]) AS t
            WHERE EXISTS (SELECT 1 FROM held)
            ${TOTAL_UPSERT}
          )
          SELECT COUNT(*) AS held FROM held`,
        values: [
          owner.siteId,
          owner.siteUserId,
          cursor,
          holder,
          col("at"),
          col("fingerprint"),
          col("ordinal"),
          col("type"),
          col("model"),
          col("tokenName"),
          col("quota"),
          col("promptTokens"),
          col("completionTokens"),
          col("durationMs"),
          col("stream"),
          col("content"),
          col("detail"),
          h(0),
          h(1),
          h(2),
          h(3),
          h(4),
          h(5),
          h(6),
          h(7),
          t(0),
          t(1),
          t(2),
          t(3),
          t(4),
          t(5),
        ],
      });
      return Number(res.rows[0]?.held ?? 0) > 0;
    },
    async entries(owner, filter, after, limit) {
      const w = filterClause(owner, filter, after, (i) => `$${i + 1}`);
      const rows = await query<EntryRow>(
        `SELECT ${ENTRY_SELECT} FROM ledger_entries WHERE ${w.sql} ORDER BY at, fingerprint, ordinal LIMIT $${w.values.length + 1}`,
        [...w.values, limit],
      );
      // bigint columns arrive as text; every value the sync stores is a safe integer.
      for (const r of rows) {
        r.quota = Number(r.quota);
        r.promptTokens = Number(r.promptTokens);
        r.completionTokens = Number(r.completionTokens);
      }
      return rows;
    },
    openEntries(owner, filter) {
      return keysetCursor((after, limit) => this.entries(owner, filter, after, limit));
    },
    async countEntries(owner, filter) {
      const w = filterClause(owner, filter, null, (i) => `$${i + 1}`);
      const rows = await query<{ n: string }>(`SELECT COUNT(*) AS n FROM ledger_entries WHERE ${w.sql}`, w.values);
      return Number(rows[0]?.n ?? 0);
    },
    async pruneBefore(owner, at) {
      const res = await pool.query("DELETE FROM ledger_entries WHERE site_id = $1 AND site_user_id = $2 AND at < $3", [
        owner.siteId,
        owner.siteUserId,
        at,
      ]);
      return res.rowCount ?? 0;
    },
    async grouped(owners, range, by) {
      if (owners.length === 0) return [];
      const o = ownersClause(owners, (i) => `$${i + 1}`, 0);
      const n = o.values.length;
      const rows = await query<RawSums & { key: string }>(
        `SELECT ${COLUMN[by]} AS key, ${SUMS} FROM ledger_hours WHERE ${o.sql} AND hour >= $${n + 1} AND hour < $${n + 2}
         ${range.consumeOnly ? "AND type = 'consume'" : ""} GROUP BY ${COLUMN[by]} ORDER BY SUM(quota) DESC, ${COLUMN[by]}`,
        [...o.values, range.from, range.to],
      );
      return rows.map((r) => ({ key: r.key, ...sumsOf(r) }));
    },
    async entrySums(owners, windows, consumeOnly, by) {
      if (owners.length === 0 || windows.length === 0) return [];
      const { sql, values } = entrySumsQuery(owners, windows, consumeOnly, by, (i) => `$${i + 1}`);
      const rows = await query<RawSums & { hour: number | string; key: string }>(sql, values);
      return rows.map((r) => ({ hour: Number(r.hour), key: r.key, ...sumsOf(r) }));
    },
    async modelFitSums(owner, range) {
      const { sql, values } = modelFitQuery(owner, range, (i) => `$${i + 1}`, "DOUBLE PRECISION");
      return (await query<Record<string, unknown>>(sql, values)).map(modelFitOf);
    },
    async lastSnapshots(owners, atMost) {
      if (owners.length === 0) return [];
      const { sql, values } = bulk.lastSnapshots(owners, atMost);
      return (await query<RawOwnerRow>(sql, values)).map(ownerSnapshotOf);
    },
    async snapshotsBetween(owners, after, before) {
      if (owners.length === 0) return [];
      const { sql, values } = bulk.snapshotsBetween(owners, after, before);
      return (await query<RawOwnerRow>(sql, values)).map(ownerSnapshotOf);
    },
    async movesSince(since, upTo) {
      if (since.length === 0) return [];
      const { sql, values } = bulk.movesSince(since, upTo);
      return (await query<RawOwnerRow>(sql, values)).map(ownerMoveOf);
    },
    async topupsSince(since, upTo) {
      if (since.length === 0) return [];
      const { sql, values } = bulk.topupsSince(since, upTo);
      return (await query<RawOwnerRow>(sql, values)).map(ownerSnapshotOf);
    },
    async ownerDays(owners, days) {
      if (owners.length === 0 || days.length === 0) return [];
      const { sql, values } = ownerDaysQuery(owners, days, (i) => `$${i + 1}`, true);
      const rows = await query<RawDay>(sql, values);
      return rows.map(ownerDayOf);
    },
    windowSums(windows) {
      return inBatches(windows, async (batch) => {
        const { sql, values } = windowSumsQuery(batch, (i) => `$${i + 1}`, true);
        return query<{ i: number; quota: string | null }>(sql, values);
      });
    },
    async hourly(owners, range) {
      if (owners.length === 0) return [];
      const o = ownersClause(owners, (i) => `$${i + 1}`, 0);
      const n = o.values.length;
      const rows = await query<RawSums & { hour: number }>(
        `SELECT hour, ${SUMS} FROM ledger_hour_totals WHERE ${o.sql} AND hour >= $${n + 1} AND hour < $${n + 2}
         ${range.consumeOnly ? "AND type = 'consume'" : ""} GROUP BY hour ORDER BY hour`,
        [...o.values, range.from, range.to],
      );
      return rows.map((r) => ({ hour: r.hour, ...sumsOf(r) }));
    },
    async hourlyBy(owners, range, by) {
      if (owners.length === 0) return [];
      const o = ownersClause(owners, (i) => `$${i + 1}`, 0);
      const n = o.values.length;
      const rows = await query<RawSums & { hour: number; key: string }>(
        `SELECT hour, ${COLUMN[by]} AS key, ${SUMS} FROM ledger_hours WHERE ${o.sql} AND hour >= $${n + 1} AND hour < $${n + 2}
         ${range.consumeOnly ? "AND type = 'consume'" : ""} GROUP BY hour, ${COLUMN[by]} ORDER BY hour`,
        [...o.values, range.from, range.to],
      );
      return rows.map((r) => ({ hour: r.hour, key: r.key, ...sumsOf(r) }));
    },
  };
}
