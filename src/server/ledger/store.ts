import type Database from "better-sqlite3";
import type pg from "pg";
import { driverOf, type Db } from "../db/driver";

/**
 * The usage ledger's bulk statements, on the driver under the client: a page of entries with
 * their hourly totals (per model and token, and per type alone) and the sync's cursor in one
 * transaction, and the analytics' sums. These
 * run tens of thousands of rows a second, where Prisma's query layer costs more than the database
 * (docs/benchmarks.md); Prisma keeps the schema, the migrations and every other ledger query.
 */
export type Owner = { siteId: number; siteUserId: number };

export type EntryRow = {
  at: number;
  fingerprint: string;
  ordinal: number;
  type: string;
  model: string;
  tokenName: string;
  quota: number;
  promptTokens: number;
  completionTokens: number;
  durationMs: number | null;
  stream: boolean;
  content: string;
};

/** Sums of a group of entries. */
export type Sums = { requests: number; quota: number; promptTokens: number; completionTokens: number };
export type Grouped = Sums & { key: string };
export type Hourly = Sums & { hour: number };

export type GroupBy = "model" | "token" | "type";
/** Seconds, `from` inclusive, `to` exclusive; `consumeOnly` leaves out every type but consume. */
export type Range = { from: number; to: number; consumeOnly: boolean };

/** Which entries an export reads: seconds `from` inclusive to `to` exclusive, and exact filters. */
export type EntryFilter = { from: number; to: number; type?: string; model?: string; token?: string };
/** Where a page of entries ended: the next one starts after it (the unique key's order). */
export type EntryKey = { at: number; fingerprint: string; ordinal: number };

/** A read through an account's entries in order, a batch at a time; close it to stop early. */
export type EntryCursor = { next(limit: number): Promise<EntryRow[]>; close(): void };

export type LedgerStore = {
  /** Entries in the key's order (second, fingerprint, copy), at most `limit`, after `after`. */
  entries(owner: Owner, filter: EntryFilter, after: EntryKey | null, limit: number): Promise<EntryRow[]>;
  /** All the filter's entries in the key's order, read as they are asked for. */
  openEntries(owner: Owner, filter: EntryFilter): EntryCursor;
  /** How many entries the filter holds. */
  countEntries(owner: Owner, filter: EntryFilter): Promise<number>;
  /** How many copies of each (second, fingerprint) the ledger keeps in [from, to]. */
  keptCopies(owner: Owner, from: number, to: number): Promise<Map<string, number>>;
  /**
   * Stores the rows and adds them to the hourly totals, and moves the sync's cursor, in one
   * transaction; false (nothing stored) when `holder` no longer holds the account's lease.
   */
  commit(owner: Owner, rows: EntryRow[], holder: string, cursor: number): Promise<boolean>;
  /** Totals per model, token or type over the range, largest spend first. */
  grouped(owners: Owner[], range: Range, by: GroupBy): Promise<Grouped[]>;
  /** Totals per hour over the range, oldest first. */
  hourly(owners: Owner[], range: Range): Promise<Hourly[]>;
  /** Deletes an account's entries before `at` (their hourly totals stay); returns how many. */
  pruneBefore(owner: Owner, at: number): Promise<number>;
  /** Totals per hour and model, token or type over the range, oldest first. */
  hourlyBy(owners: Owner[], range: Range, by: GroupBy): Promise<Array<Hourly & { key: string }>>;
};

const COLUMN: Record<GroupBy, string> = { model: "model", token: "token_name", type: "type" };

const SUMS =
  "SUM(requests) AS requests, SUM(quota) AS quota, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens";

type RawSums = {
  requests: number | string | bigint | null;
  quota: number | string | bigint | null;
  prompt_tokens: number | string | bigint | null;
  completion_tokens: number | string | bigint | null;
};
const sumsOf = (r: RawSums): Sums => ({
  requests: Number(r.requests ?? 0),
  quota: Number(r.quota ?? 0),
  promptTokens: Number(r.prompt_tokens ?? 0),
  completionTokens: Number(r.completion_tokens ?? 0),
});

/** The hourly totals a page of rows adds, one per (hour, type, model, token). */
function hoursOf(rows: EntryRow[]): Array<[number, string, string, string, number, number, number, number]> {
  const hours = new Map<string, [number, string, string, string, number, number, number, number]>();
  for (const r of rows) {
    const hour = r.at - (r.at % 3600);
    const key = JSON.stringify([hour, r.type, r.model, r.tokenName]);
    const h = hours.get(key);
    if (h) {
      h[4] += 1;
      h[5] += r.quota;
      h[6] += r.promptTokens;
      h[7] += r.completionTokens;
    } else {
      hours.set(key, [hour, r.type, r.model, r.tokenName, 1, r.quota, r.promptTokens, r.completionTokens]);
    }
  }
  return [...hours.values()];
}

/** The hourly totals summed over models and tokens, one per (hour, type). */
function totalsOf(hours: ReturnType<typeof hoursOf>): Array<[number, string, number, number, number, number]> {
  const totals = new Map<string, [number, string, number, number, number, number]>();
  for (const [hour, type, , , requests, quota, prompt, completion] of hours) {
    const key = `${hour} ${type}`;
    const t = totals.get(key);
    if (t) {
      t[2] += requests;
      t[3] += quota;
      t[4] += prompt;
      t[5] += completion;
    } else {
      totals.set(key, [hour, type, requests, quota, prompt, completion]);
    }
  }
  return [...totals.values()];
}

const ENTRY_COLUMNS =
  "site_id, site_user_id, at, fingerprint, ordinal, type, model, token_name, quota, prompt_tokens, completion_tokens, duration_ms, stream, content";
const HOUR_COLUMNS =
  "site_id, site_user_id, hour, type, model, token_name, requests, quota, prompt_tokens, completion_tokens";
const TOTAL_COLUMNS = "site_id, site_user_id, hour, type, requests, quota, prompt_tokens, completion_tokens";
const SUM_UPDATE = (
  table: string,
) => `requests = ${table}.requests + excluded.requests, quota = ${table}.quota + excluded.quota,
  prompt_tokens = ${table}.prompt_tokens + excluded.prompt_tokens,
  completion_tokens = ${table}.completion_tokens + excluded.completion_tokens`;
const TOTAL_UPSERT = `ON CONFLICT (site_id, site_user_id, hour, type) DO UPDATE SET ${SUM_UPDATE("ledger_hour_totals")}`;
const HOUR_UPSERT = `ON CONFLICT (site_id, site_user_id, hour, type, model, token_name) DO UPDATE SET ${SUM_UPDATE("ledger_hours")}`;

/** `(site_id, site_user_id) IN (...)` for a list of owners, with its parameters from `first`. */
function ownersClause(owners: Owner[], placeholder: (i: number) => string, first: number) {
  const parts = owners.map(
    (_, i) => `(site_id = ${placeholder(first + 2 * i)} AND site_user_id = ${placeholder(first + 2 * i + 1)})`,
  );
  return { sql: `(${parts.join(" OR ")})`, values: owners.flatMap((o) => [o.siteId, o.siteUserId]) };
}

/** The WHERE of an export's entries, with placeholders from `p`. */
function filterClause(owner: Owner, f: EntryFilter, after: EntryKey | null, p: (i: number) => string) {
  // After a key, the range starts at its second: one lower bound, which SQLite starts the index
  // range at (with two, it kept the window's start and scanned from there on every page).
  const values: unknown[] = [owner.siteId, owner.siteUserId, after ? Math.max(f.from, after.at) : f.from, f.to];
  const parts = [`site_id = ${p(0)}`, `site_user_id = ${p(1)}`, `at >= ${p(2)}`, `at < ${p(3)}`];
  const add = (sql: (ph: string) => string, value: unknown) => {
    parts.push(sql(p(values.length)));
    values.push(value);
  };
  if (f.type !== undefined) add((ph) => `type = ${ph}`, f.type);
  if (f.model !== undefined) add((ph) => `model = ${ph}`, f.model);
  if (f.token !== undefined) add((ph) => `token_name = ${ph}`, f.token);
  if (after) {
    const [a, b, c] = [p(values.length), p(values.length + 1), p(values.length + 2)];
    parts.push(`(at, fingerprint, ordinal) > (${a}, ${b}, ${c})`);
    values.push(after.at, after.fingerprint, after.ordinal);
  }
  return { sql: parts.join(" AND "), values };
}

const ENTRY_SELECT = `at, fingerprint, ordinal, type, model, token_name AS "tokenName", quota,
  prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens", duration_ms AS "durationMs", stream, content`;

/**
 * Keyset pages, each batch a short query of its own: no statement or transaction stays open between
 * batches, so a slow reader (a download left open) holds no snapshot that session checks or
 * writers would see the database through.
 */
function keysetCursor(page: (after: EntryKey | null, limit: number) => Promise<EntryRow[]>): EntryCursor {
  let after: EntryKey | null = null;
  let done = false;
  return {
    async next(limit) {
      if (done) return [];
      const rows = await page(after, limit);
      if (rows.length < limit) done = true;
      const last = rows[rows.length - 1];
      if (last) after = { at: last.at, fingerprint: last.fingerprint, ordinal: last.ordinal };
      return rows;
    },
    close() {
      done = true;
    },
  };
}

function sqliteStore(conn: () => Database.Database): LedgerStore {
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
      `INSERT INTO ledger_entries (${ENTRY_COLUMNS}) VALUES (${Array(14).fill("?").join(", ")})`,
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
          ...[r.promptTokens, r.completionTokens, r.durationMs, r.stream ? 1 : 0, r.content],
        );
      }
      const hours = hoursOf(rows);
      for (const h of hours) hour.run(owner.siteId, owner.siteUserId, ...h);
      for (const t of totalsOf(hours)) total.run(owner.siteId, owner.siteUserId, ...t);
      return true;
    });
    statements = { insert, hour, cursor, kept, commit };
    return statements;
  };
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

function postgresStore(pool: pg.Pool): LedgerStore {
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
      const totals = totalsOf(hours);
      const t = (i: number) => totals.map((x) => x[i]);
      const res = await pool.query<{ held: string }>({
        name: "gd-ledger-commit",
        text: `WITH held AS (
            UPDATE ledger_sync SET cursor = $3 WHERE site_id = $1 AND site_user_id = $2 AND holder = $4 RETURNING 1
          ), entries AS (
            INSERT INTO ledger_entries (${ENTRY_COLUMNS})
            SELECT $1, $2, e.* FROM unnest($5::int[], $6::text[], $7::int[], $8::text[], $9::text[], $10::text[],
              $11::bigint[], $12::bigint[], $13::bigint[], $14::int[], $15::bool[], $16::text[]) AS e
            WHERE EXISTS (SELECT 1 FROM held)
          ), hours AS (
            INSERT INTO ledger_hours (${HOUR_COLUMNS})
            SELECT $1, $2, x.* FROM unnest($17::int[], $18::text[], $19::text[], $20::text[], $21::int[],
              $22::bigint[], $23::bigint[], $24::bigint[]) AS x
            WHERE EXISTS (SELECT 1 FROM held)
            ${HOUR_UPSERT}
          ), totals AS (
            INSERT INTO ledger_hour_totals (${TOTAL_COLUMNS})
            SELECT $1, $2, t.* FROM unnest($25::int[], $26::text[], $27::int[], $28::bigint[], $29::bigint[],
              $30::bigint[]) AS t
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

const stores = new WeakMap<Db, LedgerStore>();

export function ledgerStore(db: Db): LedgerStore {
  let store = stores.get(db);
  if (!store) {
    const driver = driverOf(db);
    store = driver.kind === "postgres" ? postgresStore(driver.pool) : sqliteStore(driver.connection);
    stores.set(db, store);
  }
  return store;
}
