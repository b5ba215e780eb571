/** The ledger store's types and the SQL both databases share: columns, hourly totals, clauses, keyset pages. */
import type { FitSums } from "../gateway/prices";
import { boundOf, type Owner } from "./owner";

export type { Owner } from "./owner";

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
  /** The extra fields as a JSON object, "" when none. */
  detail: string;
};

/** Sums of a group of entries. */
export type Sums = { requests: number; quota: number; promptTokens: number; completionTokens: number };
type Grouped = Sums & { key: string };
export type Hourly = Sums & { hour: number };

export type EntryGroupBy = "model" | "token" | "type";
/** Seconds, `from` inclusive, `to` exclusive; `consumeOnly` leaves out every type but consume. */
type EntryRange = { from: number; to: number; consumeOnly: boolean };

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
  grouped(owners: Owner[], range: EntryRange, by: EntryGroupBy): Promise<Grouped[]>;
  /** Totals per hour over the range, oldest first. */
  hourly(owners: Owner[], range: EntryRange): Promise<Hourly[]>;
  /** Deletes an account's entries before `at` (their hourly totals stay); returns how many. */
  pruneBefore(owner: Owner, at: number): Promise<number>;
  /** Totals per hour and model, token or type over the range, oldest first. */
  hourlyBy(owners: Owner[], range: EntryRange, by: EntryGroupBy): Promise<Array<Hourly & { key: string }>>;
  /**
   * Totals of the entries themselves (not the hourly totals) in windows that each lie inside one
   * hour, per hour and model, token or type (key "" when `by` is null), in one query: the parts of
   * hours on the other side of a day's edge in a zone whose midnight is not on the hour (+05:30).
   */
  entrySums(owners: Owner[], windows: Window[], consumeOnly: boolean, by: EntryGroupBy | null): Promise<HourlyKeyed[]>;
  /**
   * Consumption per account and day from the hourly totals (many accounts at once): for each day
   * [start, end) its whole sum and the part before `cutoff`; `d` is the day's index.
   */
  ownerDays(owners: Owner[], days: DayWindow[]): Promise<OwnerDay[]>;
  /** The wallet's consumption (quota; what plans paid left out) of each window `(after, upTo]` of an account's entries, in order. */
  windowSums(windows: OwnerWindow[]): Promise<number[]>;
  /** Each account's last balance snapshot at or before `atMost` (none for an account without one). */
  lastSnapshots(owners: Owner[], atMost: number): Promise<OwnerSnapshot[]>;
  /** The accounts' snapshots in (after, before), oldest first. */
  snapshotsBetween(owners: Owner[], after: number, before: number): Promise<OwnerSnapshot[]>;
  /** Each account's entries other than consumption in (after, upTo] (after per account). */
  movesSince(since: Array<Owner & { after: number }>, upTo: number): Promise<OwnerMove[]>;
  /** Per model, the sums of an account's consume entries in [from, to) that a price is fitted from. */
  modelFitSums(owner: Owner, range: Window): Promise<Array<ModelFitSums>>;
  /** Each account's kept top-up history in (after, upTo] (after per account). */
  topupsSince(since: Array<Owner & { after: number }>, upTo: number): Promise<OwnerSnapshot[]>;
};

export type OwnerSnapshot = Owner & { at: number; quota: number };
/** A model's fit sums (gateway/prices.ts fitPrice), with its name. */
export type ModelFitSums = FitSums & { model: string };

/** modelFitSums' statement: products summed as reals (a bigint product could overflow). */
export function modelFitQuery(owner: Owner, range: Window, p: (i: number) => string, real: string) {
  const f = (col: string) => `CAST(${col} AS ${real})`;
  const sql = `SELECT model, COUNT(*) AS n, SUM(${f("quota")}) AS q, SUM(${f("prompt_tokens")}) AS p,
    SUM(${f("completion_tokens")}) AS c, SUM(${f("quota")} * ${f("quota")}) AS qq,
    SUM(${f("prompt_tokens")} * ${f("prompt_tokens")}) AS pp, SUM(${f("completion_tokens")} * ${f("completion_tokens")}) AS cc,
    SUM(${f("prompt_tokens")} * ${f("completion_tokens")}) AS pc, SUM(${f("quota")} * ${f("prompt_tokens")}) AS qp,
    SUM(${f("quota")} * ${f("completion_tokens")}) AS qc
    FROM ledger_entries WHERE site_id = ${p(0)} AND site_user_id = ${p(1)} AND at >= ${p(2)} AND at < ${p(3)}
    AND type = 'consume' GROUP BY model`;
  return { sql, values: [owner.siteId, owner.siteUserId, range.from, Math.min(range.to, boundOf(owner))] };
}

export const modelFitOf = (r: Record<string, unknown>): ModelFitSums => ({
  model: typeof r.model === "string" ? r.model : "",
  n: Number(r.n ?? 0),
  q: Number(r.q ?? 0),
  p: Number(r.p ?? 0),
  c: Number(r.c ?? 0),
  qq: Number(r.qq ?? 0),
  pp: Number(r.pp ?? 0),
  cc: Number(r.cc ?? 0),
  pc: Number(r.pc ?? 0),
  qp: Number(r.qp ?? 0),
  qc: Number(r.qc ?? 0),
});
export type OwnerMove = OwnerSnapshot & { type: string; content: string };

/**
 * A table of values the bulk reads join (`WITH v(c0, c1, …) AS (VALUES (…), …)`), with casts on
 * PostgreSQL, which cannot tell a bare parameter's type inside VALUES.
 */
function valuesTable(rows: Array<Array<number>>, casts: string[] | null, p: (i: number) => string) {
  const width = rows[0]?.length ?? 0;
  const cell = (i: number, c: number) => (casts ? `${p(i)}::${casts[c]}` : p(i));
  const sql = rows.map((_, r) => `(${Array.from({ length: width }, (__, c) => cell(r * width + c, c)).join(", ")})`);
  const columns = Array.from({ length: width }, (_, c) => `c${c}`).join(", ");
  return { sql: `WITH v(${columns}) AS (VALUES ${sql.join(", ")})`, values: rows.flat() };
}

/** The statements of the bulk reads, for one driver's placeholders and casts. */
export function bulkQueries(p: (i: number) => string, casts: boolean) {
  // Each owner's row: site, user, the bound of what it may read (boundOf), and a lower bound where asked.
  const three = casts ? ["int", "bigint", "bigint"] : null;
  const four = casts ? ["int", "bigint", "bigint", "int"] : null;
  const owned = (owners: Owner[]) =>
    valuesTable(
      owners.map((o) => [o.siteId, o.siteUserId, boundOf(o)]),
      three,
      p,
    );
  const since = (list: Array<Owner & { after: number }>) =>
    valuesTable(
      list.map((o) => [o.siteId, o.siteUserId, boundOf(o), o.after]),
      four,
      p,
    );
  return {
    lastSnapshots(owners: Owner[], atMost: number) {
      const v = owned(owners);
      const n = v.values.length;
      return {
        sql: `${v.sql} SELECT b.site_id, b.site_user_id, b.at, b.quota FROM v
          JOIN balance_snapshots b ON b.site_id = v.c0 AND b.site_user_id = v.c1
          AND b.at = (SELECT MAX(at) FROM balance_snapshots WHERE site_id = v.c0 AND site_user_id = v.c1 AND at <= ${p(n)} AND at < v.c2)`,
        values: [...v.values, atMost],
      };
    },
    snapshotsBetween(owners: Owner[], after: number, before: number) {
      const v = owned(owners);
      const n = v.values.length;
      return {
        sql: `${v.sql} SELECT b.site_id, b.site_user_id, b.at, b.quota FROM v
          JOIN balance_snapshots b ON b.site_id = v.c0 AND b.site_user_id = v.c1 AND b.at > ${p(n)} AND b.at < ${p(n + 1)}
          AND b.at < v.c2 ORDER BY b.at`,
        values: [...v.values, after, before],
      };
    },
    movesSince(list: Array<Owner & { after: number }>, upTo: number) {
      const v = since(list);
      const n = v.values.length;
      return {
        sql: `${v.sql} SELECT e.site_id, e.site_user_id, e.at, e.quota, e.type, e.content FROM v
          JOIN ledger_entries e ON e.site_id = v.c0 AND e.site_user_id = v.c1 AND e.at > v.c3 AND e.at <= ${p(n)}
          AND e.at < v.c2 WHERE e.type <> 'consume'`,
        values: [...v.values, upTo],
      };
    },
    topupsSince(list: Array<Owner & { after: number }>, upTo: number) {
      const v = since(list);
      const n = v.values.length;
      return {
        sql: `${v.sql} SELECT t.site_id, t.site_user_id, t.at, t.quota FROM v
          JOIN ledger_topups t ON t.site_id = v.c0 AND t.site_user_id = v.c1 AND t.at > v.c3 AND t.at <= ${p(n)}
          AND t.at < v.c2`,
        values: [...v.values, upTo],
      };
    },
  };
}

export type RawOwnerRow = {
  site_id: number;
  site_user_id: number | bigint | string;
  at: number;
  quota: number | bigint | string;
  type?: string;
  content?: string;
};

export const ownerSnapshotOf = (r: RawOwnerRow): OwnerSnapshot => ({
  siteId: Number(r.site_id),
  siteUserId: Number(r.site_user_id),
  at: Number(r.at),
  quota: Number(r.quota),
});
export const ownerMoveOf = (r: RawOwnerRow): OwnerMove => ({
  ...ownerSnapshotOf(r),
  type: r.type ?? "",
  content: r.content ?? "",
});

export type DayWindow = { start: number; end: number; cutoff: number };
export type OwnerDay = Owner & { d: number; quota: number; early: number };
export type OwnerWindow = Owner & { after: number; upTo: number };

/** Windows summed per statement (five values each). */
const WINDOWS_PER_STATEMENT = 400;

/** ownerDays' statement and values, with placeholders from `p` (and casts on PostgreSQL). */
export function ownerDaysQuery(owners: Owner[], days: DayWindow[], p: (i: number) => string, casts: boolean) {
  const v = valuesTable(
    owners.map((o) => [o.siteId, o.siteUserId, boundOf(o)]),
    casts ? ["int", "bigint", "bigint"] : null,
    p,
  );
  const values: unknown[] = [...v.values];
  const ph = (x: unknown) => {
    values.push(x);
    return p(values.length - 1);
  };
  const which = days.map((d, i) => `WHEN h.hour < ${ph(d.end)} THEN ${i}`).join(" ");
  const early = days.map((d) => `(h.hour >= ${ph(d.start)} AND h.hour < ${ph(d.cutoff)})`).join(" OR ");
  const sql = `${v.sql} SELECT h.site_id, h.site_user_id, CASE ${which} END AS d, SUM(h.quota) AS quota,
    SUM(CASE WHEN ${early} THEN h.quota ELSE 0 END) AS early
    FROM v JOIN ledger_hour_totals h ON h.site_id = v.c0 AND h.site_user_id = v.c1 AND h.hour < v.c2
    AND h.hour >= ${ph(days[0]?.start ?? 0)} AND h.hour < ${ph(days.at(-1)?.end ?? 0)} AND h.type = 'consume'
    GROUP BY h.site_id, h.site_user_id, d`;
  return { sql, values };
}

export type RawDay = {
  site_id: number;
  site_user_id: number | bigint | string;
  d: number | string | null;
  quota: number | bigint | string | null;
  early: number | bigint | string | null;
};
export const ownerDayOf = (r: RawDay): OwnerDay => ({
  siteId: Number(r.site_id),
  siteUserId: Number(r.site_user_id),
  d: Number(r.d),
  quota: Number(r.quota ?? 0),
  early: Number(r.early ?? 0),
});

/**
 * An entry a plan paid, as its kept detail (compact JSON) says: new-api's `billing_source`; the
 * wallet was not charged for it.
 */
const PLAN_PAID_LIKE = '%"billing_source":"subscription"%';

/** windowSums' statement for one batch: one sum per window, its index as `i`; what the wallet paid. */
export function windowSumsQuery(windows: OwnerWindow[], p: (i: number) => string, casts: boolean) {
  const v = valuesTable(
    windows.map((w, i) => [i, w.siteId, w.siteUserId, w.after, Math.min(w.upTo, boundOf(w) - 1)]),
    casts ? ["int", "int", "bigint", "int", "bigint"] : null,
    p,
  );
  const sql = `${v.sql} SELECT v.c0 AS i,
    SUM(CASE WHEN e.detail LIKE '${PLAN_PAID_LIKE}' THEN 0 ELSE e.quota END) AS quota FROM v JOIN ledger_entries e
    ON e.site_id = v.c1 AND e.site_user_id = v.c2 AND e.at > v.c3 AND e.at <= v.c4 AND e.type = 'consume'
    GROUP BY v.c0`;
  return { sql, values: v.values };
}

/** Batches of windows, summed by `run`, back in one list in the windows' order. */
export async function inBatches(
  windows: OwnerWindow[],
  run: (batch: OwnerWindow[]) => Promise<Array<{ i: number | string; quota: number | string | bigint | null }>>,
): Promise<number[]> {
  const out = new Array<number>(windows.length).fill(0);
  for (let start = 0; start < windows.length; start += WINDOWS_PER_STATEMENT) {
    const batch = windows.slice(start, start + WINDOWS_PER_STATEMENT);
    for (const r of await run(batch)) out[start + Number(r.i)] = Number(r.quota ?? 0);
  }
  return out;
}

/** [from, to) in Unix seconds. */
export type Window = { from: number; to: number };
type HourlyKeyed = Hourly & { key: string };

/** The statement and values of entrySums, with placeholders from `p`. */
export function entrySumsQuery(
  owners: Owner[],
  windows: Window[],
  consumeOnly: boolean,
  by: EntryGroupBy | null,
  p: (i: number) => string,
) {
  const o = ownersClause(owners, p, 0, "at");
  const first = o.values.length;
  const inWindows = windows.map((_, i) => `(at >= ${p(first + 2 * i)} AND at < ${p(first + 2 * i + 1)})`).join(" OR ");
  const key = by === null ? "''" : COLUMN[by];
  const sql = `SELECT at - at % 3600 AS hour, ${key} AS key, COUNT(*) AS requests, SUM(quota) AS quota,
    SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens
    FROM ledger_entries WHERE ${o.sql} AND (${inWindows}) ${consumeOnly ? "AND type = 'consume'" : ""}
    GROUP BY at - at % 3600${by === null ? "" : `, ${key}`}`;
  return { sql, values: [...o.values, ...windows.flatMap((w) => [w.from, w.to])] };
}

export const COLUMN: Record<EntryGroupBy, string> = { model: "model", token: "token_name", type: "type" };

export const SUMS =
  "SUM(requests) AS requests, SUM(quota) AS quota, SUM(prompt_tokens) AS prompt_tokens, SUM(completion_tokens) AS completion_tokens";

export type RawSums = {
  requests: number | string | bigint | null;
  quota: number | string | bigint | null;
  prompt_tokens: number | string | bigint | null;
  completion_tokens: number | string | bigint | null;
};
export const sumsOf = (r: RawSums): Sums => ({
  requests: Number(r.requests ?? 0),
  quota: Number(r.quota ?? 0),
  promptTokens: Number(r.prompt_tokens ?? 0),
  completionTokens: Number(r.completion_tokens ?? 0),
});

/** The hourly totals a page of rows adds, one per (hour, type, model, token). */
export function hoursOf(rows: EntryRow[]): Array<[number, string, string, string, number, number, number, number]> {
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
export function hourTotals(hours: ReturnType<typeof hoursOf>): Array<[number, string, number, number, number, number]> {
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

export const ENTRY_COLUMNS =
  "site_id, site_user_id, at, fingerprint, ordinal, type, model, token_name, quota, prompt_tokens, completion_tokens, duration_ms, stream, content, detail";
export const HOUR_COLUMNS =
  "site_id, site_user_id, hour, type, model, token_name, requests, quota, prompt_tokens, completion_tokens";
export const TOTAL_COLUMNS = "site_id, site_user_id, hour, type, requests, quota, prompt_tokens, completion_tokens";
const SUM_UPDATE = (
  table: string,
) => `requests = ${table}.requests + excluded.requests, quota = ${table}.quota + excluded.quota,
  prompt_tokens = ${table}.prompt_tokens + excluded.prompt_tokens,
  completion_tokens = ${table}.completion_tokens + excluded.completion_tokens`;
export const TOTAL_UPSERT = `ON CONFLICT (site_id, site_user_id, hour, type) DO UPDATE SET ${SUM_UPDATE("ledger_hour_totals")}`;
export const HOUR_UPSERT = `ON CONFLICT (site_id, site_user_id, hour, type, model, token_name) DO UPDATE SET ${SUM_UPDATE("ledger_hours")}`;

/**
 * `(site_id, site_user_id) IN (...)` for a list of owners, each only before its bound in `column`
 * (`hour` of the hourly tables, `at` of the entries: bounds are whole hours), with its parameters
 * from `first`.
 */
export function ownersClause(
  owners: Owner[],
  placeholder: (i: number) => string,
  first: number,
  column: "hour" | "at" = "hour",
) {
  const ph = (i: number, k: number) => placeholder(first + 3 * i + k);
  const parts = owners.map(
    (_, i) => `(site_id = ${ph(i, 0)} AND site_user_id = ${ph(i, 1)} AND ${column} < ${ph(i, 2)})`,
  );
  return { sql: `(${parts.join(" OR ")})`, values: owners.flatMap((o) => [o.siteId, o.siteUserId, boundOf(o)]) };
}

/** The WHERE of an export's entries, with placeholders from `p`. */
export function filterClause(owner: Owner, f: EntryFilter, after: EntryKey | null, p: (i: number) => string) {
  // After a key, the range starts at its second: one lower bound, which SQLite starts the index
  // range at (with two, it kept the window's start and scanned from there on every page).
  const to = Math.min(f.to, boundOf(owner));
  const values: unknown[] = [owner.siteId, owner.siteUserId, after ? Math.max(f.from, after.at) : f.from, to];
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

export const ENTRY_SELECT = `at, fingerprint, ordinal, type, model, token_name AS "tokenName", quota,
  prompt_tokens AS "promptTokens", completion_tokens AS "completionTokens", duration_ms AS "durationMs", stream, content, detail`;

/**
 * Keyset pages, each batch a short query of its own: no statement or transaction stays open between
 * batches, so a slow reader (a download left open) holds no snapshot that session checks or
 * writers would see the database through.
 */
export function keysetCursor(page: (after: EntryKey | null, limit: number) => Promise<EntryRow[]>): EntryCursor {
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
