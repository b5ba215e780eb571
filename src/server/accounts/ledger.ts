/**
 * The usage ledger's sync (design.md 13): an account's usage log copied into our store, exactly.
 *
 * Sites mask or zero their log ids, so an entry is named by its second and a fingerprint of its
 * content. For each second the ledger keeps, of every distinct entry, as many copies as the site
 * has ever shown at once: identical entries in one second (separate requests) are each kept, an
 * entry written late for a past second is added, one the site later purges stays, and reading any
 * range again changes nothing.
 *
 * A window is read newest first, always from its first page, with its upper bound moving down:
 * after a full page the seconds above the page's oldest second are complete and committed, and
 * that second is read again whole with the next page. The bound is saved after every page, so a
 * sync that dies resumes where it stopped. One sync per account at a time, across instances: a
 * lease row with an expiry.
 */
import { createHash, randomUUID } from "node:crypto";
import type { Db } from "../db/client";
import type { LogItem } from "../gateway/reads";
import { SiteDataError, logPage, type Account, type SiteDataDeps } from "./site-data";

export const LEDGER_PAGE_SIZE = 100;
/** Entries a site writes late (a slow request logged when it ends) are looked for this far back. */
export const LATE_WINDOW_SECONDS = 3600;
const LEASE_MS = 2 * 60_000;

type Entry = LogItem & { at: number; fingerprint: string };

function entryOf(item: LogItem): Entry {
  const at = Math.floor(Date.parse(item.createdAt) / 1000);
  const fingerprint = createHash("sha256")
    .update(
      JSON.stringify([
        item.type,
        item.model,
        item.tokenName,
        item.quota,
        item.promptTokens,
        item.completionTokens,
        item.durationMs,
        item.stream,
        item.content,
      ]),
    )
    .digest("hex")
    .slice(0, 32);
  return { ...item, at, fingerprint };
}

const owner = (account: Account) => ({ siteId: account.siteId, siteUserId: BigInt(account.siteUserId) });

/**
 * Stores the entries of complete seconds: of each distinct entry in a second, as many copies as
 * shown here, beyond those already kept. Returns how many were added.
 */
async function commit(db: Db, account: Account, entries: Entry[]): Promise<number> {
  if (entries.length === 0) return 0;
  const shown = new Map<string, Entry[]>();
  for (const e of entries) {
    const key = `${e.at} ${e.fingerprint}`;
    shown.set(key, [...(shown.get(key) ?? []), e]);
  }
  const ats = entries.map((e) => e.at);
  const kept = await db.ledgerEntry.groupBy({
    by: ["at", "fingerprint"],
    where: { ...owner(account), at: { gte: Math.min(...ats), lte: Math.max(...ats) } },
    _count: { _all: true },
  });
  const have = new Map(kept.map((k) => [`${k.at} ${k.fingerprint}`, k._count._all]));
  const rows = [];
  for (const [key, copies] of shown) {
    const already = have.get(key) ?? 0;
    for (let ordinal = already; ordinal < copies.length; ordinal++) {
      const e = copies[ordinal] as Entry;
      rows.push({
        ...owner(account),
        at: e.at,
        fingerprint: e.fingerprint,
        ordinal,
        type: e.type,
        model: e.model,
        tokenName: e.tokenName,
        quota: e.quota,
        promptTokens: e.promptTokens,
        completionTokens: e.completionTokens,
        durationMs: e.durationMs,
        stream: e.stream,
        content: e.content,
      });
    }
  }
  if (rows.length === 0) return 0;
  await db.ledgerEntry.createMany({ data: rows });
  return rows.length;
}

export class LedgerBusy extends Error {}

async function lease(db: Db, account: Account, holder: string): Promise<void> {
  const now = new Date();
  try {
    await db.ledgerSync.upsert({ where: { siteId_siteUserId: owner(account) }, create: owner(account), update: {} });
  } catch (error) {
    // Two first syncs at once: the other one created the row (a unique violation here); the
    // conditional update below decides which of them holds the lease.
    if ((error as { code?: string }).code !== "P2002") throw error;
  }
  const { count } = await db.ledgerSync.updateMany({
    where: { ...owner(account), OR: [{ holder: null }, { leaseUntil: null }, { leaseUntil: { lt: now } }] },
    data: { holder, leaseUntil: new Date(now.getTime() + LEASE_MS) },
  });
  if (count === 0) throw new LedgerBusy("该账户正在同步");
}

async function progress(db: Db, account: Account, holder: string, data: Record<string, unknown>): Promise<void> {
  await db.ledgerSync.updateMany({
    where: { ...owner(account), holder },
    data: { ...data, leaseUntil: new Date(Date.now() + LEASE_MS) },
  });
}

/** Reads one window [from, to] (Unix seconds, inclusive) newest first into the ledger. */
async function syncWindow(
  db: Db,
  account: Account,
  deps: SiteDataDeps,
  holder: string,
  from: number,
  to: number,
): Promise<number> {
  let upper = to;
  let added = 0;
  for (;;) {
    const { items, pageSize } = await logPage(account, { page: 1, pageSize: LEDGER_PAGE_SIZE, from, to: upper }, deps);
    const entries = items.map(entryOf).filter((e) => e.at >= from && e.at <= upper);
    if (entries.length < pageSize) {
      added += await commit(db, account, entries);
      return added;
    }
    // Sites page by id, newest first: entries not on this page are older than its last one (an
    // entry written late for a past second has a newer id and is on an earlier page). So the
    // seconds after the last entry's are complete; that second is read again whole.
    const boundary = (entries[entries.length - 1] as Entry).at;
    if (entries.every((e) => e.at <= boundary)) {
      // Nothing newer than the last entry's second on a full page: that second holds a page or
      // more. Read it alone, by pages, then go on below it.
      const whole: Entry[] = [];
      for (let page = 1; ; page++) {
        const next = await logPage(account, { page, pageSize: LEDGER_PAGE_SIZE, from: boundary, to: boundary }, deps);
        whole.push(...next.items.map(entryOf).filter((e) => e.at === boundary));
        if (next.items.length < next.pageSize) break;
      }
      added += await commit(db, account, whole);
      if (boundary <= from) return added;
      upper = boundary - 1;
    } else {
      added += await commit(
        db,
        account,
        entries.filter((e) => e.at > boundary),
      );
      upper = boundary;
    }
    await progress(db, account, holder, { cursor: upper });
  }
}

export type SyncResult = { added: number; from: number; to: number };

/**
 * Syncs an account's ledger: a window left unfinished first, then from the newest covered second
 * (less the late window) to now, or on the first sync the last `backfillDays`.
 */
export async function syncLedger(
  db: Db,
  account: Account,
  deps: SiteDataDeps,
  opts: { backfillDays: number; now?: number },
): Promise<SyncResult> {
  const holder = randomUUID();
  await lease(db, account, holder);
  try {
    const state = await db.ledgerSync.findUniqueOrThrow({ where: { siteId_siteUserId: owner(account) } });
    const now = opts.now ?? Math.floor(Date.now() / 1000);
    let added = 0;
    if (state.cursor !== null && state.windowFrom !== null && state.windowTo !== null) {
      added += await syncWindow(db, account, deps, holder, state.windowFrom, state.cursor);
      await covered(db, account, holder, state.windowFrom, state.windowTo);
    }
    const after = await db.ledgerSync.findUniqueOrThrow({ where: { siteId_siteUserId: owner(account) } });
    const from =
      after.newest === null ? now - opts.backfillDays * 86_400 : Math.max(0, after.newest - LATE_WINDOW_SECONDS);
    await progress(db, account, holder, { windowFrom: from, windowTo: now, cursor: now, lastError: null });
    added += await syncWindow(db, account, deps, holder, from, now);
    await covered(db, account, holder, from, now);
    return { added, from, to: now };
  } catch (error) {
    const message = error instanceof SiteDataError ? error.message : "同步失败，请稍后再试";
    await db.ledgerSync.updateMany({ where: { ...owner(account), holder }, data: { lastError: message } });
    throw error;
  } finally {
    await db.ledgerSync.updateMany({ where: { ...owner(account), holder }, data: { holder: null, leaseUntil: null } });
  }
}

/** A window is complete: the covered range grows to include it. */
async function covered(db: Db, account: Account, holder: string, from: number, to: number): Promise<void> {
  const state = await db.ledgerSync.findUniqueOrThrow({ where: { siteId_siteUserId: owner(account) } });
  await progress(db, account, holder, {
    oldest: state.oldest === null ? from : Math.min(state.oldest, from),
    newest: state.newest === null ? to : Math.max(state.newest, to),
    windowFrom: null,
    windowTo: null,
    cursor: null,
    syncedAt: new Date(),
  });
}

export type LedgerStatus = {
  running: boolean;
  entries: number;
  oldest: string | null;
  newest: string | null;
  syncedAt: string | null;
  /** Share of the window in progress already read (0–1); null when no sync is under way. */
  progress: number | null;
  lastError: string | null;
};

export async function ledgerStatus(db: Db, account: Account): Promise<LedgerStatus> {
  const [state, entries] = await Promise.all([
    db.ledgerSync.findUnique({ where: { siteId_siteUserId: owner(account) } }),
    db.ledgerEntry.count({ where: owner(account) }),
  ]);
  const iso = (s: number | null | undefined) =>
    s === null || s === undefined ? null : new Date(s * 1000).toISOString();
  const running = !!state?.holder && !!state.leaseUntil && state.leaseUntil.getTime() > Date.now();
  const span = state?.windowTo != null && state.windowFrom != null ? state.windowTo - state.windowFrom : 0;
  return {
    running,
    entries,
    oldest: iso(state?.oldest),
    newest: iso(state?.newest),
    syncedAt: state?.syncedAt?.toISOString() ?? null,
    progress:
      running && state?.cursor != null && span > 0 ? Math.min(1, ((state.windowTo ?? 0) - state.cursor) / span) : null,
    lastError: state?.lastError ?? null,
  };
}
