/**
 * 核对's verifying pass (docs/design.md 27): every consume entry the ledger keeps is checked once,
 * in batches after it is stored (never on a read), against its own logged ratios and against the
 * site's published list for its group at its time. The verdicts are summed per account, hour,
 * model and token with the entries' cache figures (ledger_check_hours), their times counted per
 * bucket (ledger_speed), and the entries that differ kept (ledger_flags), and what plans paid
 * (new-api's `billing_source`): 核对, 缓存, 速度 and 套餐 read sums however long the ledger grows.
 *
 * The pass walks the entries by id. On PostgreSQL ids are handed out before their transactions
 * commit, so the pass goes only up to the highest id the previous pass saw (a commit is one short
 * statement, long done by then); SQLite writes one transaction at a time, so it goes to the end.
 * A site whose list has not been read yet gets the first verdict now and the second once its list
 * is read (the entries waiting are kept as an id range per site).
 */
import { checkCharge, type CheckedEntry } from "../gateway/charge-check";
import { listCharge, loggedGroup, LIST_UNKNOWN, type ListFigures } from "../gateway/list-check";
import { cacheFigures } from "../gateway/cache-figures";
import { bucketOf, firstTokenMs } from "../gateway/speed";
import { paidByPlan } from "../gateway/plans";
import { addUp } from "./check-sql";
import { detailOf } from "./log-view";
import type { Db } from "../db/client";
import { driverOf } from "../db/driver";
import type { Owner } from "./owner";
import { keptQuotaPerUnit } from "../gateway/families";

/** A site's list as known: its group ratios and each model's figures at a time (Unix seconds). */
export type SiteList = {
  published: boolean;
  groupRatios: Record<string, number>;
  priceAt(model: string, at: number): ListFigures | null;
};

/** Where the lists come from (prices/ above the ledger hands it in). */
export type ListSource = {
  /** The lists of those of the sites whose list has been read at least once. */
  sites(siteIds: number[]): Promise<Map<number, SiteList>>;
  /** Each account's group as its site told it, keyed "siteId:siteUserId". */
  groups(owners: Owner[]): Promise<Map<string, string>>;
};

/** Entries verified in one step (a read, its verdicts, one transaction): tens of milliseconds. */
const BATCH = 500;
/** The most ids a batch looks through (see verifyCharges). */
const MAX_STRETCH = 64 * BATCH;

type Progress = { after: number; horizon: number; pending: Record<string, { from: number; to: number }> };

async function progressOf(db: Db): Promise<Progress> {
  const row = await db.ledgerCheckState.findUnique({
    where: { id: 1 },
    select: { after: true, horizon: true, pending: true },
  });
  if (!row) return { after: 0, horizon: 0, pending: {} };
  let pending: Progress["pending"] = {};
  try {
    pending = JSON.parse(row.pending) as Progress["pending"];
  } catch {
    pending = {};
  }
  return { after: row.after, horizon: row.horizon, pending };
}

/** Keeps the pass's progress (inside the batch's transaction where there is one). */
async function keep(db: Pick<Db, "ledgerCheckState">, p: Progress): Promise<void> {
  const data = { after: p.after, horizon: p.horizon, pending: JSON.stringify(p.pending) };
  await db.ledgerCheckState.upsert({
    where: { id: 1 },
    create: { id: 1, ...data },
    update: data,
    select: { id: true },
  });
}

const entrySelect = {
  id: true,
  siteId: true,
  siteUserId: true,
  at: true,
  model: true,
  tokenName: true,
  type: true,
  quota: true,
  promptTokens: true,
  completionTokens: true,
  durationMs: true,
  content: true,
  detail: true,
} as const;

type Row = {
  id: number;
  siteId: number;
  siteUserId: bigint;
  at: number;
  model: string;
  tokenName: string;
  type: string;
  quota: bigint;
  promptTokens: bigint;
  completionTokens: bigint;
  durationMs: number | null;
  content: string;
  detail: string;
};

function checkedOf(r: Row): CheckedEntry {
  return {
    type: r.type,
    quota: Number(r.quota),
    promptTokens: Number(r.promptTokens),
    completionTokens: Number(r.completionTokens),
    content: r.content,
    detail: detailOf(r.detail),
  };
}

/** One hour-and-model's additions to ledger_check_hours. */
type HourSums = {
  siteId: number;
  siteUserId: bigint;
  hour: number;
  model: string;
  tokenName: string;
  entries: number;
  quota: bigint;
  checked: number;
  checkedQuota: bigint;
  expected: bigint;
  differs: number;
  listChecked: number;
  listQuota: bigint;
  listExpected: bigint;
  listDiffers: number;
  over: bigint;
  inputTokens: bigint;
  cacheRead: bigint;
  cacheWrite: bigint;
  cacheSaved: bigint;
  cacheCost: bigint;
  planEntries: number;
  planQuota: bigint;
};

type Flag = {
  entryId: number;
  siteId: number;
  siteUserId: bigint;
  at: number;
  model: string;
  quota: bigint;
  expected: bigint | null;
  listExpected: bigint | null;
  note: string;
  /** Its hour's key (not stored with the flag). */
  hourKey: string;
};

const CANNOT_CHECK = { expected: null, reason: "无法核对这条记录" } as const;
/** A verdict, or "cannot be checked" where its arithmetic throws (no entry stops the pass). */
function unlessThrown<T>(verdict: () => T): T | typeof CANNOT_CHECK {
  try {
    return verdict();
  } catch {
    return CANNOT_CHECK;
  }
}

/** The verdicts of a batch, summed and flagged; `listOnly` adds the second verdict to entries that have the first. */
async function verdicts(db: Db, rows: Row[], lists: ListSource, listOnly: boolean) {
  const siteIds = [...new Set(rows.map((r) => r.siteId))];
  const sites = await db.site.findMany({ where: { id: { in: siteIds } }, select: { id: true, quotaPerUnit: true } });
  const qpu = new Map(sites.map((s) => [s.id, keptQuotaPerUnit(s.quotaPerUnit)]));
  const known = await lists.sites(siteIds);
  const owners = [...new Map(rows.map((r) => [`${r.siteId}:${r.siteUserId}`, r])).values()];
  const groups = await lists.groups(owners.map((r) => ({ siteId: r.siteId, siteUserId: Number(r.siteUserId) })));
  const hours = new Map<string, HourSums>();
  const flags: Flag[] = [];
  const waiting = new Set<number>();
  const speed = new Map<string, unknown[]>();
  const count = (r: Row, kind: "total" | "first", ms: number) => {
    const hour = Math.floor(r.at / 3600) * 3600;
    const bucket = bucketOf(ms);
    const key = JSON.stringify([r.siteId, String(r.siteUserId), hour, r.model, kind, bucket]);
    const row = speed.get(key) ?? [r.siteId, r.siteUserId, hour, r.model, kind, bucket, 0];
    row[6] = (row[6] as number) + 1;
    speed.set(key, row);
  };
  for (const r of rows) {
    const e = checkedOf(r);
    const q = qpu.get(r.siteId) ?? 500_000;
    const list = known.get(r.siteId);
    if (!list) waiting.add(r.siteId);
    // An entry whose arithmetic fails is one that cannot be checked; the pass goes on (docs/design.md 29).
    const checked = unlessThrown(() => checkCharge(e, q));
    const own = listOnly ? null : checked;
    let againstList: ReturnType<typeof listCharge> = null;
    if (list) {
      const name = loggedGroup(e.detail) ?? groups.get(`${r.siteId}:${r.siteUserId}`) ?? null;
      const ratio = name !== null ? (list.groupRatios[name] ?? null) : null;
      againstList = list.published
        ? unlessThrown(() => listCharge(e, q, list.priceAt(r.model, r.at), { name, ratio }, checked))
        : { expected: null, reason: LIST_UNKNOWN.noList };
    }
    const hour = Math.floor(r.at / 3600) * 3600;
    const key = JSON.stringify([r.siteId, String(r.siteUserId), hour, r.model, r.tokenName]);
    const h = hours.get(key) ?? {
      ...{ siteId: r.siteId, siteUserId: r.siteUserId, hour, model: r.model, tokenName: r.tokenName },
      ...{ entries: 0, quota: 0n, checked: 0, checkedQuota: 0n, expected: 0n, differs: 0 },
      ...{ listChecked: 0, listQuota: 0n, listExpected: 0n, listDiffers: 0, over: 0n },
      ...{ inputTokens: 0n, cacheRead: 0n, cacheWrite: 0n, cacheSaved: 0n, cacheCost: 0n },
      ...{ planEntries: 0, planQuota: 0n },
    };
    hours.set(key, h);
    const cache = listOnly ? null : cacheFigures(e);
    if (!listOnly && e.type === "consume") {
      if (r.durationMs !== null && r.durationMs > 0) count(r, "total", r.durationMs);
      const first = firstTokenMs(e.detail);
      if (first !== null) count(r, "first", first);
    }
    if (!listOnly) {
      h.entries++;
      h.quota += r.quota;
      if (paidByPlan(e.detail)) {
        h.planEntries++;
        h.planQuota += r.quota;
      }
    }
    if (cache) {
      h.inputTokens += BigInt(cache.input);
      h.cacheRead += BigInt(cache.read);
      h.cacheWrite += BigInt(cache.write);
      h.cacheSaved += BigInt(cache.saved);
      h.cacheCost += BigInt(cache.cost);
    }
    let ownDiffers = false;
    if (own && own.expected !== null) {
      h.checked++;
      h.checkedQuota += r.quota;
      h.expected += BigInt(own.expected);
      ownDiffers = !own.ok;
      if (ownDiffers) h.differs++;
    }
    let listDiffers = false;
    if (againstList && againstList.expected !== null) {
      h.listChecked++;
      h.listQuota += r.quota;
      h.listExpected += BigInt(againstList.expected);
      listDiffers = !againstList.ok;
      if (listDiffers) h.listDiffers++;
    }
    if (ownDiffers || listDiffers) {
      flags.push({
        ...{ entryId: r.id, siteId: r.siteId, siteUserId: r.siteUserId, at: r.at, model: r.model, quota: r.quota },
        expected: own && own.expected !== null && ownDiffers ? BigInt(own.expected) : null,
        listExpected: listDiffers && againstList?.expected != null ? BigInt(againstList.expected) : null,
        note: listDiffers && againstList && "note" in againstList ? againstList.note : "",
        hourKey: key,
      });
    }
  }
  return { hours, flags, waiting, speed: [...speed.values()] };
}

const overOf = (f: { quota: bigint; expected: bigint | null; listExpected: bigint | null }) => {
  const lows = [f.expected, f.listExpected].filter((x): x is bigint => x !== null);
  const low = lows.reduce((a, b) => (b < a ? b : a), lows[0] ?? f.quota);
  return f.quota - low;
};

const HOUR_COLUMNS = [
  "site_id",
  "site_user_id",
  "hour",
  "model",
  "token_name",
  "entries",
  "quota",
  "checked",
  "checked_quota",
  "expected",
  "differs",
  "list_checked",
  "list_quota",
  "list_expected",
  "list_differs",
  "over",
  "input_tokens",
  "cache_read",
  "cache_write",
  "cache_saved",
  "cache_cost",
  "plan_entries",
  "plan_quota",
] as const;
const SPEED_COLUMNS = ["site_id", "site_user_id", "hour", "model", "kind", "bucket", "count"] as const;

/**
 * Writes a batch's sums and flags and the pass's progress, in one transaction. A new entry's flag is
 * new; the second verdict of a waiting site's entries is merged with the flag the first left.
 */
async function save(db: Db, v: Awaited<ReturnType<typeof verdicts>>, progress: Progress, listOnly: boolean) {
  const postgres = driverOf(db).kind === "postgres";
  await db.$transaction(async (tx) => {
    let flags = v.flags;
    // What each flag changes of its hour's overcharge: all of it when new, the difference when merged.
    const was = new Map<number, bigint>();
    if (listOnly && flags.length > 0) {
      const ids = flags.map((f) => f.entryId);
      const had = new Map(
        (
          await tx.ledgerFlag.findMany({
            where: { entryId: { in: ids } },
            select: { entryId: true, expected: true, over: true },
          })
        ).map((f) => [f.entryId, f]),
      );
      for (const [id, f] of had) was.set(id, f.over);
      flags = flags.map((f) => ({ ...f, expected: f.expected ?? had.get(f.entryId)?.expected ?? null }));
      await tx.ledgerFlag.deleteMany({ where: { entryId: { in: [...had.keys()] } } });
    }
    const rows = flags.map(({ hourKey, ...f }) => {
      const over = overOf(f);
      const h = v.hours.get(hourKey);
      if (h) h.over += over - (was.get(f.entryId) ?? 0n);
      return { ...f, over };
    });
    const hourRows = [...v.hours.values()].map((h) => [
      ...[h.siteId, h.siteUserId, h.hour, h.model, h.tokenName, h.entries, h.quota, h.checked, h.checkedQuota],
      ...[h.expected, h.differs, h.listChecked, h.listQuota, h.listExpected, h.listDiffers, h.over],
      ...[h.inputTokens, h.cacheRead, h.cacheWrite, h.cacheSaved, h.cacheCost, h.planEntries, h.planQuota],
    ]);
    await addUp(tx, "ledger_check_hours", HOUR_COLUMNS, 5, hourRows, postgres);
    await addUp(tx, "ledger_speed", SPEED_COLUMNS, 6, v.speed, postgres);
    if (rows.length > 0) await tx.ledgerFlag.createMany({ data: rows });
    await keep(tx, progress);
  });
}

/**
 * Verifies what is new, at most `maxBatches` batches: first the second verdict of sites whose list
 * has been read since their entries were checked, then the entries after the pass's cursor.
 * `turn` is awaited before each batch's read, after it and before its transaction (background
 * work's turns beside live requests). Returns how many entries were looked at.
 */
export async function verifyCharges(
  db: Db,
  lists: ListSource,
  { maxBatches = 200, turn }: { maxBatches?: number; turn?: () => Promise<void> } = {},
): Promise<number> {
  let looked = 0;
  let batches = 0;
  let progress = await progressOf(db);
  // A batch of new entries reads a bounded stretch of ids. Asked for the first BATCH of all the ids
  // left, PostgreSQL (its estimates behind a table that grows) read every one of them and sorted
  // them: a batch cost more the more the pass had left. A stretch that held fewer than a batch
  // (ids taken by other types, entries a site sent twice) makes the next one twice as long, up to
  // MAX_STRETCH; a full one, half as long, down to a batch. A site's waiting entries are read by
  // its site (an index leads with it), however far apart their ids lie among other sites'.
  // `stretch` is the first stretch's length; Infinity reads the whole range, a batch at a time.
  const reader = (where: object, to: number, stretch: number) => async (from: number) => {
    await turn?.();
    const until = Math.min(to, from + stretch - 1);
    const rows = (await db.ledgerEntry.findMany({
      where: { ...where, id: { gte: from, lte: until } },
      orderBy: { id: "asc" },
      take: BATCH,
      select: entrySelect,
    })) as Row[];
    const last = rows[rows.length - 1];
    if (stretch !== Infinity)
      stretch = rows.length < BATCH ? Math.min(2 * stretch, MAX_STRETCH) : Math.max(BATCH, stretch / 2);
    // The batch ends after its last entry, or with its stretch when that held fewer. What it read
    // is taken in on its turn.
    await turn?.();
    return { rows, upTo: rows.length === BATCH && last ? last.id : until };
  };
  // The sites waiting for their list: the ones read by now get their second verdict.
  const waiting = Object.keys(progress.pending).map(Number);
  const readNow = waiting.length ? await lists.sites(waiting) : new Map<number, SiteList>();
  for (const siteId of readNow.keys()) {
    const key = String(siteId);
    let range = progress.pending[key];
    const read = range && reader({ siteId, type: "consume" }, range.to, Infinity);
    while (range && read && batches < maxBatches) {
      const { rows, upTo } = await read(range.from);
      batches++;
      looked += rows.length;
      const pending = { ...progress.pending };
      if (upTo >= range.to) delete pending[key];
      else pending[key] = { from: upTo + 1, to: range.to };
      progress = { ...progress, pending };
      const v = await verdicts(db, rows, lists, true);
      await turn?.();
      await save(db, v, progress, true);
      range = pending[key];
    }
  }
  // New entries up to the horizon, then the horizon moves to where the table ends now.
  const end = (await db.ledgerEntry.aggregate({ _max: { id: true } }))._max.id ?? 0;
  const horizon = driverOf(db).kind === "postgres" ? progress.horizon : end;
  const read = reader({ type: "consume", siteId: { gt: 0 } }, horizon, BATCH);
  let unsaved = false;
  while (batches < maxBatches && progress.after < horizon) {
    const { rows, upTo: after } = await read(progress.after + 1);
    batches++;
    looked += rows.length;
    if (rows.length === 0) {
      // Nothing to verify in the stretch: the cursor moves on, kept with the next batch or at the end.
      progress = { ...progress, after };
      unsaved = true;
      continue;
    }
    const v = await verdicts(db, rows, lists, false);
    const pending = { ...progress.pending };
    for (const siteId of v.waiting) {
      const first = rows.find((r) => r.siteId === siteId)?.id ?? after;
      const had = pending[String(siteId)];
      pending[String(siteId)] = { from: had ? Math.min(had.from, first) : first, to: after };
    }
    progress = { ...progress, after, pending };
    await turn?.();
    await save(db, v, progress, false);
    unsaved = false;
  }
  if (progress.horizon !== end || unsaved) {
    progress = { ...progress, horizon: end };
    await keep(db, progress);
  }
  return looked;
}

/** Whether entries stored since the pass last ran wait for their verdicts. */
export async function progressBehind(db: Db): Promise<boolean> {
  const { after } = await progressOf(db);
  const waiting = (to?: number) =>
    db.ledgerEntry.findFirst({
      where: { id: { gt: after, ...(to === undefined ? {} : { lte: to }) }, type: "consume", siteId: { gt: 0 } },
      orderBy: { id: "asc" },
      select: { id: true },
    });
  // The stretch after the cursor first: asked of every id left, PostgreSQL may read them all (see
  // verifyCharges), and a page asks this while the pass is far behind.
  return (await waiting(after + MAX_STRETCH)) !== null || (await waiting()) !== null;
}
