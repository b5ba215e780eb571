/**
 * The usage ledger's sync (docs/design.md 13): an account's usage log copied into our store, exactly.
 *
 * Sites mask or zero their log ids, so an entry is named by its second and a fingerprint of its
 * content. For each second the ledger keeps, of every distinct entry, as many copies as the site
 * has ever shown at once: identical entries in one second (separate requests) are each kept, an
 * entry written late for a past second is added, one the site later purges stays, and reading any
 * range again changes nothing.
 *
 * A window is read newest first in slices of time, each read whole and committed in one
 * transaction with the cursor below it (and with its hourly totals), so a sync that dies resumes
 * where it stopped. One sync per account at a time, across instances: a lease row with an expiry,
 * renewed while the sync runs and checked in every commit; a holder that dies loses it when it
 * expires, and a process that stops ends its syncs at the next slice and lets go of their leases.
 */
import { answerTurn, backgroundPace } from "../core/live-load";
import { noteCommit } from "../db/store-writes";
import { randomUUID } from "node:crypto";
import { env } from "../core/env";
import { MSG } from "../core/messages";
import { metrics } from "../core/metrics";
import type { Db } from "../db/client";
import { ledgerStore, type EntryRow } from "./store";
import { LedgerBusy, lease, letGoOf, owner, progress } from "./sync-leases";
import { notePlans } from "./plans";
import { noteTopupHistory } from "./topup-history";

export { LedgerBusy, releaseHeldLedgerLeases } from "./sync-leases";

import type { SelfInfo } from "../gateway/reads";
import { LEDGER_LIMITS, REFUSED, entryBytes, entryOf, type Entry } from "./entries";
import {
  SiteDataError,
  ledgerReader,
  type Account,
  type LedgerReader,
  type SiteDataDeps,
} from "../site-data/site-data";

const LEDGER_PAGE_SIZE = 100;
/** Entries a site writes late (a slow request logged when it ends) are looked for this far back. */
const LATE_WINDOW_SECONDS = 3600;
const INITIAL_SLICE_SECONDS = 3600;
const MAX_SLICE_SECONDS = 7 * 86_400;

/** One sync's state: the account, what reads its site, its lease, the seconds covered before, what it read. */
type Sync = {
  db: Db;
  account: Account;
  reader: LedgerReader;
  holder: string;
  leaseMs: number;
  /** Aborts when the process stops: the sync ends after the slice it is reading. */
  signal: AbortSignal | undefined;
  /** The sync's turns beside live requests (core/live-load.ts): before each step. */
  pace: () => Promise<void>;
  covered: { oldest: number; newest: number } | null;
  pages: number;
  bytes: number;
  refusedSeconds: number;
};

/** Entries refused in a slice, and the last reason. */
type Refusals = { count: number; reason: string | null };

/** The run has read what one run may, or its process stops: it ends here, and the next sync goes on from the cursor. */
class RunLimitReached extends Error {}

/**
 * Stores the entries of complete seconds and moves the cursor, in one transaction: of each
 * distinct entry in a second, as many copies as shown here beyond those already kept (looked up
 * only where an earlier sync covered); refused entries are counted on the sync state. Returns how
 * many were added.
 */
async function commit(sync: Sync, entries: Entry[], cursor: number, refused: Refusals): Promise<number> {
  const { db, account, holder, covered } = sync;
  const who = { siteId: account.siteId, siteUserId: account.siteUserId };
  const shown = new Map<string, Entry[]>();
  let min = Infinity;
  let max = -Infinity;
  for (const e of entries) {
    const key = `${e.at} ${e.fingerprint}`;
    const copies = shown.get(key);
    if (copies) copies.push(e);
    else shown.set(key, [e]);
    min = Math.min(min, e.at);
    max = Math.max(max, e.at);
  }
  const overlaps = covered !== null && entries.length > 0 && min <= covered.newest && max >= covered.oldest;
  const have = overlaps ? await ledgerStore(db).keptCopies(who, min, max) : new Map<string, number>();
  const rows: EntryRow[] = [];
  for (const [key, copies] of shown) {
    for (let ordinal = have.get(key) ?? 0; ordinal < copies.length; ordinal++) {
      const e = copies[ordinal] as Entry;
      rows.push({ ...e, ordinal });
    }
  }
  // What the commit met is what readiness reports of the store (a full disk, before the probe sees it).
  let held: boolean;
  try {
    held = await ledgerStore(db).commit(who, rows, holder, cursor);
    noteCommit(null);
  } catch (error) {
    noteCommit(error);
    throw error;
  }
  if (!held) throw new LedgerBusy(MSG.syncLeaseLost);
  metrics().ledgerEntries.inc(rows.length);
  if (refused.count > 0) {
    await db.ledgerSync.updateMany({
      where: { ...owner(account), holder },
      data: { skipped: { increment: refused.count }, skipReason: refused.reason },
    });
  }
  return rows.length;
}

/** A slice of seconds read whole, or the count of entries it holds when over a page. */
type Slice =
  | { kind: "whole"; entries: Entry[]; pageSize: number; counted: boolean; refused: Refusals }
  | { kind: "over"; total: number };

/** Families that give no total (one-api) are paged through; a slice past this many pages is narrowed. */
const UNCOUNTED_PAGES = 20;
/** Attempts at a crowded second whose total moved while it was paged through. */
const CROWDED_ATTEMPTS = 5;

/**
 * Reads the seconds [lo, hi] whole. One page holds the slice when it is short or the site's total
 * says so; a slice over a page is given back to be narrowed, except a single second, which is
 * paged through with the total checked on every page (an entry written meanwhile shifts the pages).
 * A second past MAX_SECOND_ENTRIES is refused whole (nothing of it is kept in memory or stored).
 */
async function readSlice(sync: Sync, lo: number, hi: number): Promise<Slice> {
  const { MAX_RUN_PAGES, MAX_RUN_BYTES, MAX_SECOND_ENTRIES } = LEDGER_LIMITS;
  const page = async (n: number) => {
    if (sync.pages >= MAX_RUN_PAGES || sync.bytes >= MAX_RUN_BYTES) throw new RunLimitReached(REFUSED.runLimit);
    sync.pages++;
    const p = await sync.reader.logPage({ page: n, pageSize: LEDGER_PAGE_SIZE, from: lo, to: hi });
    const entries: Entry[] = [];
    const refused: Refusals = { count: 0, reason: null };
    for (const item of p.items) {
      const e = entryOf(item);
      if ("refused" in e) {
        refused.count++;
        refused.reason = e.refused;
      } else if (e.at >= lo && e.at <= hi) {
        sync.bytes += entryBytes(e);
        entries.push(e);
      }
    }
    return { ...p, entries, refused };
  };
  const crowded = (count: number): Slice => {
    sync.refusedSeconds++;
    const at = new Date(lo * 1000).toISOString().replace(".000Z", "Z");
    const reason = `${REFUSED.crowded}（${at}），已跳过该秒`;
    if (sync.refusedSeconds > LEDGER_LIMITS.MAX_RUN_REFUSED_SECONDS) {
      throw new SiteDataError(`${MSG.siteFailedPrefix}${REFUSED.tooManySeconds}`);
    }
    return { kind: "whole", entries: [], pageSize: LEDGER_PAGE_SIZE, counted: true, refused: { count, reason } };
  };
  for (let attempt = 0; attempt < CROWDED_ATTEMPTS; attempt++) {
    const first = await page(1);
    const { pageSize, total } = first;
    const counted = total !== null;
    if (first.items.length < pageSize || (total !== null && total <= pageSize)) {
      return { kind: "whole", entries: first.entries, pageSize, counted, refused: first.refused };
    }
    if (total !== null && lo < hi) return { kind: "over", total };
    if (total !== null && total > MAX_SECOND_ENTRIES) return crowded(first.items.length);
    const entries = [...first.entries];
    const refused = { ...first.refused };
    let moved = false;
    for (let n = 2; ; n++) {
      if (total === null && lo < hi && n > UNCOUNTED_PAGES) return { kind: "over", total: 2 * entries.length };
      // A second the site keeps filling beyond its own total, or past the limit, is refused.
      if (entries.length + refused.count > MAX_SECOND_ENTRIES || (total !== null && (n - 1) * pageSize > total)) {
        return crowded(entries.length + refused.count);
      }
      const next = await page(n);
      if (next.total !== total) {
        moved = true;
        break;
      }
      entries.push(...next.entries);
      refused.count += next.refused.count;
      refused.reason = next.refused.reason ?? refused.reason;
      if (next.items.length < pageSize) break;
    }
    if (!moved) return { kind: "whole", entries, pageSize, counted, refused };
  }
  throw new SiteDataError(MSG.siteBusy, "busy");
}

/**
 * Reads one window [from, to] (Unix seconds, inclusive) into the ledger, newest slice first. Sites
 * page by id, and an entry written late for a past second has a newer id than its neighbours, so
 * no page can bound the next: the window is read in slices of time, each whole, and each committed
 * with the cursor moved below it. The slice width follows the density, aiming at most of a page.
 * `complete` is false when the run's reading limit stopped it first (the cursor says where).
 */
async function syncWindow(
  sync: Sync,
  from: number,
  to: number,
): Promise<{ added: number; complete: boolean; reason?: string }> {
  let upper = to;
  let width = INITIAL_SLICE_SECONDS;
  let added = 0;
  // Each slice is committed while the next one is read: the store and the site work side by side;
  // commits still go one after the other, in order.
  let committing: Promise<number> = Promise.resolve(0);
  committing.catch(() => undefined);
  try {
    while (upper >= from) {
      // Live requests first: beside them the process's syncs take a bounded share of it.
      await sync.pace();
      if (sync.signal?.aborted) throw new RunLimitReached(REFUSED.stopped);
      const lo = Math.max(from, upper - width + 1);
      const span = upper - lo + 1;
      const slice = await readSlice(sync, lo, upper);
      if (slice.kind === "over") {
        width = Math.max(1, Math.min(span - 1, Math.floor((span * LEDGER_PAGE_SIZE * 0.6) / slice.total)));
        continue;
      }
      added += await committing;
      committing = commit(sync, slice.entries, lo - 1, slice.refused);
      committing.catch(() => undefined);
      upper = lo - 1;
      const target = slice.pageSize * (slice.counted ? 0.8 : UNCOUNTED_PAGES / 4);
      const grow = Math.min(4, target / Math.max(1, slice.entries.length));
      width = Math.max(1, Math.min(MAX_SLICE_SECONDS, Math.floor(span * grow)));
    }
    return { added: added + (await committing), complete: true };
  } catch (error) {
    // A commit under way finishes (or fails) before the sync lets go of its lease.
    const last = await committing.catch(() => 0);
    if (error instanceof RunLimitReached) return { added: added + last, complete: false, reason: error.message };
    throw error;
  }
}

export type SyncResult = { added: number; from: number; to: number; complete: boolean };

/** The balance as a snapshot row, or null when the site reports numbers no account has. */
function snapshotOf(balance: Pick<SelfInfo, "quota" | "usedQuota" | "requestCount">) {
  const ok = (n: number | null): n is number => n !== null && Number.isSafeInteger(n);
  if (!ok(balance.quota) || !ok(balance.usedQuota) || !ok(balance.requestCount)) return null;
  return {
    quota: BigInt(balance.quota),
    usedQuota: BigInt(balance.usedQuota),
    requestCount: BigInt(balance.requestCount),
  };
}

/**
 * Syncs an account's ledger: a window left unfinished first, then from the newest covered second
 * (less the late window) to now, or on the first sync the last `backfillDays`; and notes the
 * balance the site reports. A run that reaches its reading limit stops with the window in
 * progress, and the next sync goes on from there.
 */
export async function syncLedger(
  db: Db,
  account: Account,
  deps: SiteDataDeps,
  opts: {
    backfillDays: number;
    now?: number;
    signal?: AbortSignal;
    leaseMs?: number;
    /** Told the group the user object says, read with the balance (the prices follow it). */
    noteGroup?: (group: string) => Promise<void>;
    /** Started by a person (api/site-deps.ts): its turns beside live requests are its own, not the runner's queue. */
    byPerson?: boolean;
  },
): Promise<SyncResult> {
  const holder = randomUUID();
  // Live requests first, at every step of the sync: before it starts, after what it reads before
  // the log (the balance, its state, the plans), between the log's slices and before the top-ups.
  const pace = backgroundPace(opts.byPerson === true);
  await pace();
  // How long the lease lasts unrenewed: JOB_LEASE_SECONDS, for the syncs at sign-in and on demand too.
  const leaseMs = opts.leaseMs ?? env().JOB_LEASE_SECONDS * 1000;
  await lease(db, account, holder, leaseMs);
  // The lease is renewed while the sync runs, whatever a site read takes; a lost one shows at the next commit.
  const heartbeat = setInterval(
    () => void progress({ db, account, holder, leaseMs }, {}).catch(() => undefined),
    leaseMs / 3,
  );
  heartbeat.unref();
  try {
    // The runner's calls take in their answers on their turn too (a person's own sync is not held).
    const turn = opts.byPerson === true ? undefined : answerTurn;
    const reader = await ledgerReader(account, { ...deps, background: true, turn });
    const now = opts.now ?? Math.floor(Date.now() / 1000);
    const balance = await reader.balance();
    await opts.noteGroup?.(balance.group);
    const snapshot = snapshotOf(balance);
    if (snapshot) {
      await db.balanceSnapshot.upsert({
        where: { siteId_siteUserId_at: { ...owner(account), at: now } },
        create: { ...owner(account), at: now, ...snapshot },
        update: {},
        select: { at: true },
      });
    } else {
      await db.ledgerSync.updateMany({
        where: { ...owner(account), holder },
        data: { skipReason: "站点报告的余额超出合理范围，未记录余额快照" },
      });
    }
    const state = await db.ledgerSync.findUniqueOrThrow({
      where: { siteId_siteUserId: owner(account) },
      select: { oldest: true, newest: true, cursor: true, windowFrom: true, windowTo: true, plansReadAt: true },
    });
    await notePlans(db, account, reader, now, state.plansReadAt, holder);
    await pace();
    const sync: Sync = {
      db,
      account,
      reader,
      holder,
      leaseMs,
      signal: opts.signal,
      pace,
      covered: state.oldest !== null && state.newest !== null ? { oldest: state.oldest, newest: state.newest } : null,
      pages: 0,
      bytes: 0,
      refusedSeconds: 0,
    };
    const stopped = async (added: number, from: number, to: number, reason?: string): Promise<SyncResult> => {
      await progress(sync, { lastError: reason ?? REFUSED.runLimit });
      return { added, from, to, complete: false };
    };
    let added = 0;
    if (state.cursor !== null && state.windowFrom !== null && state.windowTo !== null) {
      const resumed = await syncWindow(sync, state.windowFrom, state.cursor);
      added += resumed.added;
      if (!resumed.complete) return await stopped(added, state.windowFrom, state.windowTo, resumed.reason);
      sync.covered = await covered(sync, state.windowFrom, state.windowTo);
    }
    const from =
      sync.covered === null ? now - opts.backfillDays * 86_400 : Math.max(0, sync.covered.newest - LATE_WINDOW_SECONDS);
    await progress(sync, { windowFrom: from, windowTo: now, cursor: now, lastError: null });
    const window = await syncWindow(sync, from, now);
    added += window.added;
    if (!window.complete) return await stopped(added, from, now, window.reason);
    await covered(sync, from, now);
    await pace();
    await noteTopupHistory(db, account, reader, from, now);
    return { added, from, to: now, complete: true };
  } catch (error) {
    // A sync the site's budget (or the site's own request for quiet) deferred is waiting, not
    // failed: it goes on at the runner's next look, and the account shows no error meanwhile.
    const deferred = error instanceof SiteDataError && error.kind === "busy";
    const message = deferred
      ? null
      : error instanceof SiteDataError || error instanceof LedgerBusy
        ? error.message
        : MSG.syncFailed;
    // The store itself may be what failed: the sync's own error is the one to tell.
    await db.ledgerSync
      .updateMany({ where: { ...owner(account), holder }, data: { lastError: message } })
      .catch(() => undefined);
    throw error;
  } finally {
    clearInterval(heartbeat);
    await letGoOf(db, holder, account);
  }
}

/** A window is complete: the covered range grows to include it. */
async function covered(sync: Sync, from: number, to: number): Promise<{ oldest: number; newest: number }> {
  const state = await sync.db.ledgerSync.findUniqueOrThrow({
    where: { siteId_siteUserId: owner(sync.account) },
    select: { oldest: true, newest: true },
  });
  const range = {
    oldest: state.oldest === null ? from : Math.min(state.oldest, from),
    newest: state.newest === null ? to : Math.max(state.newest, to),
  };
  await progress(sync, {
    ...range,
    windowFrom: null,
    windowTo: null,
    cursor: null,
    syncedAt: new Date(),
  });
  return range;
}

/** Drops entries older than `keepDays` (their hourly totals stay), account by account; returns how many went. */
export async function pruneLedgers(db: Db, keepDays: number, now = Date.now()): Promise<number> {
  const cutoff = Math.floor(now / 1000) - keepDays * 86_400;
  const owners = await db.ledgerSync.findMany({ select: { siteId: true, siteUserId: true } });
  let pruned = (await db.ledgerTopup.deleteMany({ where: { at: { lt: cutoff } } })).count;
  // A flag goes with its entry; the hour's 核对 sums stay, as the hourly totals do.
  await db.ledgerFlag.deleteMany({ where: { at: { lt: cutoff } } });
  for (const o of owners) {
    pruned += await ledgerStore(db).pruneBefore({ siteId: o.siteId, siteUserId: Number(o.siteUserId) }, cutoff);
  }
  return pruned;
}
