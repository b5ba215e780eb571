/**
 * The ledger's background work (design.md 13, 18): every account with a live session is synced
 * every LEDGER_SYNC_MINUTES (never one without: its access token is used only while its owner is
 * signed in), each at its own moment of the interval so that the syncs spread over it; and once an
 * hour, by one instance of the deployment, entries older than LEDGER_KEEP_DAYS are dropped, their
 * hourly totals kept.
 */
import pLimit from "p-limit";
import { LedgerBusy, pruneLedgers, syncLedger } from "../ledger/sync";
import { pruneActionRecords } from "../actions/records";
import { SiteDataError } from "../site-data/site-data";
import { syncDue } from "../ledger/schedule";
import { lastSyncs } from "../ledger/sync-status";
import { env } from "../core/env";
import { logEvent } from "../core/log";
import { processState, type StatePart } from "../core/process-state";
import { releaseLeftLeases, runLeased } from "./leases";
import { startJob, trackJobWork } from "./registry";
import { db as defaultDb, type Db } from "../db/client";
import { sessionStore } from "../session/store";
import { siteRegistry } from "../sites/registry";

const PRUNE_EVERY_MS = 60 * 60_000;
/**
 * Syncs under way at once from this process, and per site: a site's gate lets background work
 * send one call at a time within half its budget, so more than two syncs of one site only wait
 * there, while a global limit alone would let one site's waiting syncs hold every place and the
 * other sites' accounts fall behind.
 */
const SYNCS_AT_ONCE = 16;
const SYNCS_PER_SITE = 2;

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

/**
 * The syncs this process has started or queued, and the places they take: every look of the
 * runner starts what became due without waiting for the syncs of earlier looks (a site whose
 * budget makes its syncs wait holds up no other site's).
 */
const RUNNER: StatePart<{
  inFlight: Set<string>;
  limit: ReturnType<typeof pLimit>;
  perSite: Map<number, ReturnType<typeof pLimit>>;
}> = {
  name: "ledger-runner",
  create: () => ({ inFlight: new Set(), limit: pLimit(SYNCS_AT_ONCE), perSite: new Map() }),
};

/** How long after a start the next one may come: the interval, doubled per failure in a row (at most 8×). */
export function retryWaitMs(intervalMs: number, failures: number): number {
  return intervalMs * 2 ** Math.min(Math.max(failures, 0), 3);
}

/**
 * Syncs every account that has a live session on a site that still exists and that is due (its
 * moment of the interval came since its last sync; not tried within its retry wait; not under
 * way or queued here already); the newest session's token is used. Resolves, with how many it
 * started, when those syncs have ended. `signal` ends the run (the process stops): no sync starts
 * after it, and those under way end after their slice.
 */
export async function syncDueLedgers(
  db: Db,
  opts: LedgerJobOptions,
  now = Date.now(),
  signal?: AbortSignal,
): Promise<number> {
  const attempted = processState().get(ATTEMPTED);
  const runner = processState().get(RUNNER);
  const sessions = await sessionStore(db).listLive(new Date(now));
  const sites = new Map((await siteRegistry(db).list()).map((s) => [s.id, s.url]));
  const syncedAt = await lastSyncs(db);
  const due = new Map<string, (typeof sessions)[number]>();
  const interval = opts.syncMinutes * 60_000;
  for (const s of sessions) {
    const key = `${s.siteId}:${s.siteUserId}`;
    // A session signed in at an address the site has since left is no way to it (design.md 10).
    if (due.has(key) || runner.inFlight.has(key) || sites.get(s.siteId) !== s.siteUrl) continue;
    const tried = attempted.get(key);
    if (!syncDue(key, syncedAt.get(key) ?? 0, interval, now)) continue;
    if (tried && now - tried.at < retryWaitMs(interval, tried.failures)) continue;
    due.set(key, s);
  }
  const siteLimit = (siteId: number) => {
    let l = runner.perSite.get(siteId);
    if (!l) runner.perSite.set(siteId, (l = pLimit(SYNCS_PER_SITE)));
    return l;
  };
  const deps = { db, timeoutMs: opts.timeoutMs, perMinute: opts.perMinute };
  for (const key of due.keys()) runner.inFlight.add(key);
  await Promise.all(
    [...due].map(([key, s]) =>
      siteLimit(s.siteId)(() =>
        runner.limit(async () => {
          if (signal?.aborted) return;
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
            const result = await syncLedger(db, account, deps, { backfillDays: opts.backfillDays, signal });
            // A backfill that stopped at its run limit goes on at the next tick, not an interval later.
            if (result.complete) attempted.set(key, { at: now, failures: 0 });
            else attempted.delete(key);
          } catch (error) {
            // A busy lease is another instance's: this one looks again at its next tick, so it takes
            // over as soon as that lease ends (its holder died). Other reasons are on the account's
            // sync state (usage.status).
            if (error instanceof LedgerBusy) {
              attempted.delete(key);
              return;
            }
            // The site's budget here was spent, or the site asked for quiet: its gate decides when
            // calls go again, so the account is not failing; it queues again at the next look
            // (its cursor kept: nothing is read twice).
            if (error instanceof SiteDataError && error.kind === "busy") {
              attempted.delete(key);
              logEvent("ledger.sync_deferred", { site: s.siteId });
              return;
            }
            attempted.set(key, { at: now, failures: failures + 1 });
            const reason = error instanceof Error ? error.message : String(error);
            logEvent("ledger.sync_failed", { site: s.siteId, failures: failures + 1, reason });
          }
        }),
      ).finally(() => runner.inFlight.delete(key)),
    ),
  );
  for (const [key, tried] of attempted) if (now - tried.at > 2 * retryWaitMs(interval, 3)) attempted.delete(key);
  return due.size;
}

/** The longest between two looks for due syncs. */
const LEDGER_LOOK_SECONDS = 15;

/**
 * Every JOB_TICK_SECONDS (15 s at most) the due syncs; every hour the retention, by one instance
 * of the deployment. Syncs off with LEDGER_SYNC_MINUTES=0 (retention stays).
 */
export function startLedgerJobs(): void {
  const e = env();
  const leaseMs = e.JOB_LEASE_SECONDS * 1000;
  const opts: LedgerJobOptions = {
    syncMinutes: e.LEDGER_SYNC_MINUTES,
    keepDays: e.LEDGER_KEEP_DAYS,
    backfillDays: e.LEDGER_BACKFILL_DAYS,
    perMinute: e.SITE_REQUESTS_PER_MINUTE,
    timeoutMs: e.SITE_TIMEOUT_MS,
  };
  // Looked at every 15 s at most: a backfill whose holder died goes on within a minute.
  startJob("ledger.jobs", Math.min(e.JOB_TICK_SECONDS, LEDGER_LOOK_SECONDS) * 1000, async (signal) => {
    const db = defaultDb();
    // What an outage of the store cut short is let go of first, so it goes on at this look.
    await releaseLeftLeases();
    // The syncs go on after this look; the next look starts what has become due meanwhile.
    if (opts.syncMinutes > 0) trackJobWork("ledger.syncs", syncDueLedgers(db, opts, Date.now(), signal));
    if (signal.aborted) return;
    await runLeased(db, "ledger.prune", { leaseMs, everyMs: PRUNE_EVERY_MS }, async () => {
      const n = await pruneLedgers(db, opts.keepDays);
      if (n > 0) logEvent("ledger.pruned", { count: n });
      // The 操作记录 are kept a year, pruned on the same hourly pass.
      const records = await pruneActionRecords(db);
      if (records > 0) logEvent("actions.pruned", { count: records });
    });
  });
}
