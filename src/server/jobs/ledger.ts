/**
 * The ledger's background work (design.md 13): every account with a live session is synced every
 * LEDGER_SYNC_MINUTES (never one without: its access token is used only while its owner is signed
 * in), and entries older than LEDGER_KEEP_DAYS are dropped, their hourly totals kept.
 */
import pLimit from "p-limit";
import { LedgerBusy, pruneLedgers, syncLedger } from "../ledger/sync";
import { lastSyncs } from "../ledger/sync-status";
import { env } from "../core/env";
import { logEvent } from "../core/log";
import { processState, type StatePart } from "../core/process-state";
import { startJob } from "./registry";
import { db as defaultDb, type Db } from "../db/client";
import { sessionStore } from "../session/store";
import { siteRegistry } from "../sites/registry";

const TICK_MS = 60_000;
const PRUNE_EVERY_MS = 60 * 60_000;
/** Syncs under way at once from this process (each site's gate keeps them polite). */
const SYNCS_AT_ONCE = 4;

export type LedgerJobOptions = {
  syncMinutes: number;
  keepDays: number;
  backfillDays: number;
  perMinute: number;
  timeoutMs: number;
};

/**
 * When this process last started a sync of each account, and how many in a row failed: a failing
 * account waits a full interval, then twice, four, eight times as long (its site is not hammered).
 */
const ATTEMPTED: StatePart<Map<string, { at: number; failures: number }>> = {
  name: "ledger-attempts",
  create: () => new Map(),
};

/** How long after a start the next one may come: the interval, doubled per failure in a row (at most 8×). */
export function retryWaitMs(intervalMs: number, failures: number): number {
  return intervalMs * 2 ** Math.min(Math.max(failures, 0), 3);
}

/**
 * Syncs every account that has a live session on a site that still exists and whose ledger was
 * last synced over `syncMinutes` ago (and not tried within its retry wait); the newest session's
 * token is used. Returns how many syncs ran.
 */
export async function syncDueLedgers(db: Db, opts: LedgerJobOptions, now = Date.now()): Promise<number> {
  const attempted = processState().get(ATTEMPTED);
  const sessions = await sessionStore(db).listLive(new Date(now));
  const sites = new Map((await siteRegistry(db).list()).map((s) => [s.id, s.url]));
  const syncedAt = await lastSyncs(db);
  const due = new Map<string, (typeof sessions)[number]>();
  const interval = opts.syncMinutes * 60_000;
  for (const s of sessions) {
    const key = `${s.siteId}:${s.siteUserId}`;
    // A session signed in at an address the site has since left is no way to it (design.md 10).
    if (due.has(key) || sites.get(s.siteId) !== s.siteUrl) continue;
    const tried = attempted.get(key);
    if (now - (syncedAt.get(key) ?? 0) < interval) continue;
    if (tried && now - tried.at < retryWaitMs(interval, tried.failures)) continue;
    due.set(key, s);
  }
  const limit = pLimit(SYNCS_AT_ONCE);
  const deps = { db, timeoutMs: opts.timeoutMs, perMinute: opts.perMinute };
  await Promise.all(
    [...due].map(([key, s]) =>
      limit(async () => {
        const failures = attempted.get(key)?.failures ?? 0;
        attempted.set(key, { at: now, failures });
        const account = {
          sessionId: s.id,
          siteId: s.siteId,
          siteUrl: s.siteUrl,
          siteUserId: s.siteUserId,
          userId: s.userId,
        };
        try {
          const result = await syncLedger(db, account, deps, { backfillDays: opts.backfillDays });
          // A backfill that stopped at its run limit goes on at the next tick, not an interval later.
          if (result.complete) attempted.set(key, { at: now, failures: 0 });
          else attempted.delete(key);
        } catch (error) {
          // The reason is on the account's sync state (usage.status); a busy lease is another instance's.
          if (error instanceof LedgerBusy) return;
          attempted.set(key, { at: now, failures: failures + 1 });
          logEvent("ledger.sync_failed", { site: s.siteId, failures: failures + 1 });
        }
      }),
    ),
  );
  for (const [key, tried] of attempted) if (now - tried.at > 2 * retryWaitMs(interval, 3)) attempted.delete(key);
  return due.size;
}

/** Every minute the due syncs; every hour the retention. Off with LEDGER_SYNC_MINUTES=0 (retention stays). */
export function startLedgerJobs(): void {
  const e = env();
  const opts: LedgerJobOptions = {
    syncMinutes: e.LEDGER_SYNC_MINUTES,
    keepDays: e.LEDGER_KEEP_DAYS,
    backfillDays: e.LEDGER_BACKFILL_DAYS,
    perMinute: e.SITE_REQUESTS_PER_MINUTE,
    timeoutMs: e.SITE_TIMEOUT_MS,
  };
  let prunedAt = 0;
  startJob("ledger.jobs", TICK_MS, async () => {
    const db = defaultDb();
    if (opts.syncMinutes > 0) await syncDueLedgers(db, opts);
    if (Date.now() - prunedAt > PRUNE_EVERY_MS) {
      prunedAt = Date.now();
      const n = await pruneLedgers(db, opts.keepDays);
      if (n > 0) logEvent("ledger.pruned", { count: n });
    }
  });
}
