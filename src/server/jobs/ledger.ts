/**
 * The ledger's background work (docs/design.md 13, 18): every account with a live session is synced
 * every LEDGER_SYNC_MINUTES (never one without: its access token is used only while its owner is
 * signed in), each at its own moment of the interval so that the syncs spread over it; and once an
 * hour, by one instance of the deployment, entries older than LEDGER_KEEP_DAYS are dropped, their
 * hourly totals kept.
 */
import pLimit from "p-limit";
import { LedgerBusy, pruneLedgers, syncLedger } from "../ledger/sync";
import { followGroup } from "../prices/read";
import { pruneActionRecords } from "../actions/records";
import { SiteDataError } from "../site-data/site-data";
import { nextSync, syncDue } from "../ledger/schedule";
import { lastSyncsOf } from "../ledger/sync-status";
import { ledgerDue, type DueAccount } from "../session/due";
import { sessionStore, type StoredSession } from "../session/store";
import { siteRegistry } from "../sites/registry";
import { env } from "../core/env";
import { leaveForLater } from "../core/left-over";
import { yieldToLive } from "../core/live-load";
import { logEvent } from "../core/log";
import { processState, type StatePart } from "../core/process-state";
import { releaseLeftLeases, runLeased } from "./leases";
import { startJob, trackJobWork } from "./registry";
import { backgroundDb, type Db } from "../db/client";
import { isDatabaseUnavailable, isStorageFull } from "../db/errors";

const PRUNE_EVERY_MS = 60 * 60_000;
/** The longest between two looks for due syncs. */
const LOOK_MS = 15_000;
/**
 * While more is due than a look could take, how often the runner sees whether places came free:
 * at most 64 accounts a second taken per instance (a look every second, the pace a SQLite store
 * was measured to keep beside its live reads with 200,000 accounts due).
 */
const AGAIN_MS = 1_000;
/**
 * Syncs under way at once from this process, and per site: a site's gate lets background work
 * send one call at a time within half its budget, so more than two syncs of one site only wait
 * there, while a global limit alone would let one site's waiting syncs hold every place and the
 * other sites' accounts fall behind.
 */
const SYNCS_AT_ONCE = 16;
const SYNCS_PER_SITE = 2;
/**
 * Accounts claimed and not yet ended in this process, in all and per site: a pass claims no more
 * than the places free, so what a pass reads is bounded whatever the deployment's size, and a
 * site's accounts beyond its share go back to wait for the next look instead of holding places.
 */
const QUEUED = 4 * SYNCS_AT_ONCE;
const QUEUED_PER_SITE = 4 * SYNCS_PER_SITE;

export type LedgerJobOptions = {
  syncMinutes: number;
  keepDays: number;
  backfillDays: number;
  perMinute: number;
  timeoutMs: number;
  /**
   * How long a claimed account is held for this process (renewed at every look while its sync
   * runs): another instance takes it after, when this one died. JOB_LEASE_SECONDS, as the leases.
   */
  holdMs?: number;
};

/**
 * The syncs this process has started, and the places they take: every look of the runner starts
 * what became due without waiting for the syncs of earlier looks (a site whose budget makes its
 * syncs wait holds up no other site's).
 */
const RUNNER: StatePart<{
  inFlight: Map<string, { siteId: number; siteUserId: number }>;
  limit: ReturnType<typeof pLimit>;
  perSite: Map<number, ReturnType<typeof pLimit>>;
  /** The last look claimed every place it had and started each: more may be due than it could take. */
  behind: boolean;
  /** A look is claiming and choosing now. */
  looking: boolean;
  /** How long the last look took to claim and choose: its step, for its turn beside live requests. */
  lookMs: number;
}> = {
  name: "ledger-runner",
  create: () => ({
    inFlight: new Map(),
    limit: pLimit(SYNCS_AT_ONCE),
    perSite: new Map(),
    behind: false,
    looking: false,
    lookMs: 0,
  }),
};

/** How long after a start the next one may come: the interval, doubled per failure in a row (at most 8×). */
function retryWaitMs(intervalMs: number, failures: number): number {
  return intervalMs * 2 ** Math.min(Math.max(failures, 0), 3);
}

type Claimed = DueAccount & { key: string };

/**
 * The newest live session of each claimed account signed in at its site's address now (a session
 * signed in at an address the site has since left is no way to it, docs/design.md 10), and when each
 * last synced.
 */
async function sessionsOf(db: Db, accounts: Claimed[], now: Date) {
  const sites = await siteRegistry(db).urls([...new Set(accounts.map((a) => a.siteId))]);
  const sessions = await Promise.all(
    accounts.map((a) => {
      const url = sites.get(a.siteId);
      return url === undefined ? Promise.resolve(null) : sessionStore(db).newestLive(a, url, now);
    }),
  );
  return { sessions, syncedAt: await lastSyncsOf(db, accounts) };
}

type Started = { account: Claimed; session: StoredSession };

/**
 * Which of the claimed accounts start a sync now; the others are due again when they should be:
 * parked without a live session, at their next moment when synced meanwhile, at the next look
 * when their site has syncs enough waiting here.
 */
async function chooseStarts(
  db: Db,
  claimed: Claimed[],
  interval: number,
  now: number,
): Promise<{ start: Started[]; sentBack: number }> {
  const runner = processState().get(RUNNER);
  const due = ledgerDue(db);
  const { sessions, syncedAt } = await sessionsOf(db, claimed, new Date(now));
  const start: Started[] = [];
  let sentBack = 0;
  const queuedAt = new Map<number, number>();
  for (const [i, account] of claimed.entries()) {
    const session = sessions[i];
    const last = syncedAt.get(account.key) ?? 0;
    if (!session) {
      await due.next(account, null, 0);
    } else if (!syncDue(account.key, last, interval, now) && account.failures === 0) {
      // Synced meanwhile (at sign-in, on demand): due at its next moment.
      await due.next(account, new Date(nextSync(account.key, last, interval, now)));
    } else if ((queuedAt.get(account.siteId) ?? 0) + siteQueued(runner, account.siteId) >= QUEUED_PER_SITE) {
      // Its site has syncs enough waiting here: the account goes back, due at the next look.
      await due.next(account, new Date(now + LOOK_MS));
      sentBack++;
    } else {
      queuedAt.set(account.siteId, (queuedAt.get(account.siteId) ?? 0) + 1);
      start.push({ account, session });
    }
  }
  return { start, sentBack };
}

/**
 * Claims the accounts due now, up to the places this process has free (session/due.ts), and syncs
 * each that has a live session on a site that still exists and whose moment of the interval came
 * since its last sync; the newest session's token is used. An account without a live session is
 * parked until its next sign-in. Resolves, with how many it started, when those syncs have
 * ended. `signal` ends the run (the process stops): no sync starts after it, and those under way
 * end after their slice.
 */
export async function syncDueLedgers(
  db: Db,
  opts: LedgerJobOptions,
  now = Date.now(),
  signal?: AbortSignal,
): Promise<number> {
  const runner = processState().get(RUNNER);
  const due = ledgerDue(db);
  const interval = opts.syncMinutes * 60_000;
  const holdUntil = new Date(now + (opts.holdMs ?? 30_000));
  // One look at a time takes places: the next counts what this one started.
  if (runner.looking) return 0;
  runner.looking = true;
  const lookStarted = performance.now();
  let start: Started[];
  try {
    // The accounts this process syncs now stay held: no other instance takes them meanwhile.
    await due.hold([...runner.inFlight.values()], holdUntil);
    const places = QUEUED - runner.inFlight.size;
    const taken = await due.claim(places, new Date(now), holdUntil);
    runner.behind = false;
    const claimed = taken
      .map((a) => ({ ...a, key: `${a.siteId}:${a.siteUserId}` }))
      .filter((a) => !runner.inFlight.has(a.key));
    if (claimed.length === 0) return 0;
    let sentBack: number;
    try {
      ({ start, sentBack } = await chooseStarts(db, claimed, interval, now));
    } catch (error) {
      // The store failed after the claim: the claimed accounts fall due again as soon as it is back
      // (core/left-over.ts), not when their hold runs out.
      for (const account of claimed) leaveForLater(`ledger-due:${account.key}`, () => due.next(account, new Date()));
      throw error;
    }
    for (const { account } of start) runner.inFlight.set(account.key, account);
    // Behind: every place taken, most of them started. Accounts mostly sent back (their sites have
    // syncs enough waiting) mean the sites are the limit, and an early look would only churn.
    runner.behind = taken.length === places && sentBack < taken.length / 2;
  } finally {
    runner.looking = false;
    runner.lookMs = performance.now() - lookStarted;
  }
  const siteLimit = (siteId: number) => {
    let l = runner.perSite.get(siteId);
    if (!l) runner.perSite.set(siteId, (l = pLimit(SYNCS_PER_SITE)));
    return l;
  };
  const deps = { db, timeoutMs: opts.timeoutMs, perMinute: opts.perMinute };
  await Promise.all(
    start.map(({ account, session: s }) =>
      siteLimit(s.siteId)(() =>
        runner.limit(async () => {
          if (signal?.aborted) return due.next(account, new Date(now));
          const ledgerAccount = {
            sessionId: s.id,
            siteId: s.siteId,
            siteUrl: s.siteUrl,
            siteUserId: s.siteUserId,
            userId: s.userId,
          };
          const ended = await syncLedger(db, ledgerAccount, deps, {
            backfillDays: opts.backfillDays,
            signal,
            noteGroup: (group) => followGroup(db, ledgerAccount, group),
          }).then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
          const [dueAt, failures] = nextAfter(account, ended, interval, now);
          // A store out of reach now: noted once it is back, not left to the hold's end.
          await due
            .next(account, dueAt, failures)
            .catch(() => leaveForLater(`ledger-due:${account.key}`, () => due.next(account, dueAt, failures)));
        }),
      ).finally(() => {
        runner.inFlight.delete(account.key);
        // A site with no sync under way or waiting here keeps no limiter (a new one starts the same).
        if (siteQueued(runner, s.siteId) === 0) runner.perSite.delete(s.siteId);
      }),
    ),
  );
  return start.length;
}

/** What the runner keeps in this process: syncs under way or waiting, and the sites they are of. */
export function ledgerRunnerKept(): { syncs: number; sites: number } {
  const runner = processState().get(RUNNER);
  return { syncs: runner.inFlight.size, sites: runner.perSite.size };
}

/** The syncs of a site this process has under way or waiting. */
function siteQueued(runner: { inFlight: Map<string, { siteId: number }> }, siteId: number): number {
  let n = 0;
  for (const a of runner.inFlight.values()) if (a.siteId === siteId) n++;
  return n;
}

/** When an account is next due after its sync ended so, and its failures in a row. */
function nextAfter(
  account: Claimed,
  ended: { result: { complete: boolean } } | { error: unknown },
  interval: number,
  now: number,
): [Date, number] {
  if ("result" in ended) {
    // A backfill that stopped at its run limit goes on at the next look, not an interval later.
    if (!ended.result.complete) return [new Date(now), 0];
    return [new Date(nextSync(account.key, now, interval, now)), 0];
  }
  const { error } = ended;
  // A busy lease is another's (a sign-in's sync, another instance's): looked at again at the next
  // look, so this one takes over as soon as that lease ends (its holder died).
  if (error instanceof LedgerBusy) return [new Date(now + LOOK_MS), account.failures];
  // The site's budget here was spent, or the site asked for quiet: its gate decides when calls go
  // again, so the account is not failing; due again at the next look (its cursor kept: nothing
  // is read twice).
  if (error instanceof SiteDataError && error.kind === "busy") {
    logEvent("ledger.sync_deferred", { site: account.siteId });
    return [new Date(now), account.failures];
  }
  // The store could not take the entries (a full disk, an outage): not the site's fault, so no
  // wait of the site's; tried again at the next look, as soon as the store takes writes again.
  if (isStorageFull(error) || isDatabaseUnavailable(error)) {
    logEvent("ledger.sync_store_failed", { site: account.siteId });
    return [new Date(now + LOOK_MS), account.failures];
  }
  // Other reasons are on the account's sync state (usage.status); each failure doubles the wait.
  const failures = account.failures + 1;
  const reason = error instanceof Error ? error.message : String(error);
  logEvent("ledger.sync_failed", { site: account.siteId, failures, reason });
  return [new Date(now + retryWaitMs(interval, failures)), failures];
}

/**
 * A look, and while the last one took every place it had (more is due than it could take), another
 * as soon as half the places have come free, until the next tick (`tickMs` away) is near: the
 * runner keeps pace with what is due instead of waiting out the tick while its places stand empty.
 */
export async function lookWhileBehind(
  db: Db,
  opts: LedgerJobOptions,
  signal: AbortSignal,
  tickMs: number,
): Promise<void> {
  const runner = processState().get(RUNNER);
  const until = Date.now() + tickMs - AGAIN_MS;
  // A look claims and chooses (a few queries per account): beside live requests it takes its turn
  // as a sync's step does, after what the last one took.
  const look = async () => {
    await yieldToLive(runner.lookMs);
    if (!signal.aborted) trackJobWork("ledger.syncs", syncDueLedgers(db, opts, Date.now(), signal));
  };
  await look();
  while (Date.now() < until && !signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, AGAIN_MS).unref());
    if (!runner.behind) return;
    if (runner.inFlight.size <= QUEUED / 2) await look();
  }
}

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
    holdMs: leaseMs,
  };
  // Looked at every 15 s at most: a backfill whose holder died goes on within a minute.
  const tickMs = Math.min(e.JOB_TICK_SECONDS * 1000, LOOK_MS);
  startJob("ledger.jobs", tickMs, async (signal) => {
    const db = backgroundDb();
    // What an outage of the store cut short is let go of first, so it goes on at this look.
    await releaseLeftLeases();
    // The syncs go on after this look; the next look starts what has become due meanwhile.
    if (opts.syncMinutes > 0) await lookWhileBehind(db, opts, signal, tickMs);
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
