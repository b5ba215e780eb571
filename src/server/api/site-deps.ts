/**
 * What the routers that read an account's site or ledger share: the site-data dependencies a
 * request's context gives, the sessions a request may read, and a ledger sync started from one.
 */
import { listAccounts } from "../accounts/browser-accounts";
import { accountOf } from "../accounts/overview";
import { logError, logEvent } from "../core/log";
import { keepUntilStopped, stopSignal } from "../core/stopping";
import { LedgerBusy, syncLedger } from "../ledger/sync";
import { nextSync } from "../ledger/schedule";
import { followGroup } from "../prices/read";
import { syncStates } from "../ledger/sync-status";
import { openAlertsOf } from "../alerts/history";
import type { ListedAccount } from "../accounts/schemas";
import type { BrowserAccounts } from "../session/cookie";
import { sessionStore, type LiveSession } from "../session/store";
import { SiteDataError, type SiteDataDeps } from "../site-data/site-data";
import { storedScope, type LedgerViews } from "../workspace/overview";
import { lastBalanceOf } from "../ledger/analytics";
import { daysLeftOf } from "../ledger/days-left";
import { ownerOfSession } from "../ledger/owner";
import { awaitingFirstSync, storedSummaries } from "../ledger/stored";
import { isLedgerOnly, type ScopedAccount } from "../workspace/scope";
import { workspaceStore, type WorkspaceSession } from "../workspace/workspaces";
import type { Context } from "./context";
import { savedAccountsOf } from "./trpc";

export function siteDepsOf(ctx: Context, refresh = false): SiteDataDeps {
  return {
    db: ctx.db,
    timeoutMs: ctx.timeoutMs,
    perMinute: ctx.siteRequestsPerMinute,
    maxWaitMs: ctx.siteBudgetWaitMs,
    acceptLanguage: ctx.headers.get("accept-language"),
    refresh,
  };
}

/**
 * Starts a sync of the session's account in the background (the first one copies
 * LEDGER_BACKFILL_DAYS, which may take minutes within the site's budget); one already running,
 * here or on another instance, is left to finish.
 */
export function startLedgerSync(ctx: Context, session: LiveSession): void {
  if (!session.site || isLedgerOnly(session)) return;
  // Ends with the process (its stop signal), and a stopping process waits for it.
  keepUntilStopped(
    syncLedger(ctx.db, accountOf(session), siteDepsOf(ctx), {
      backfillDays: ctx.ledgerBackfillDays,
      signal: stopSignal(),
      noteGroup: (group) => followGroup(ctx.db, session, group),
      byPerson: true,
    }),
  ).catch((error: unknown) => {
    if (error instanceof LedgerBusy) return;
    // Deferred by the site's budget: the runner goes on with it at its next look.
    if (error instanceof SiteDataError && error.kind === "busy") {
      logEvent("ledger.sync_deferred", { site: session.siteId });
      return;
    }
    logError("ledger.sync", error);
  });
}

/**
 * A workspace's listing with each account's background work beside it (docs/design.md 18): when its
 * ledger last synced, when it syncs next, whether a sync runs now, the last error in words; and
 * its open alerts (docs/design.md 21).
 */
export async function withJobStatus(
  ctx: Context,
  workspaceId: number,
  accounts: ListedAccount[],
): Promise<ListedAccount[]> {
  const owners = accounts.flatMap((a) => (a.site ? [{ siteId: a.site.id, siteUserId: a.userId }] : []));
  const [states, alerts] = await Promise.all([syncStates(ctx.db, owners), openAlertsOf(ctx.db, workspaceId)]);
  const interval = ctx.ledgerSyncMinutes * 60_000;
  return accounts.map((a) => {
    if (!a.saved || !a.site) return a;
    const key = `${a.site.id}:${a.userId}`;
    const state = states.get(key);
    const at = state?.syncedAt ?? null;
    const next =
      interval > 0 && a.saved.state === "ok" ? new Date(nextSync(key, at?.getTime() ?? 0, interval, Date.now())) : null;
    const sync = {
      at: at?.toISOString() ?? null,
      next: next?.toISOString() ?? null,
      running: state?.running ?? false,
      error: state?.lastError ?? null,
    };
    return { ...a, saved: { ...a.saved, sync, alerts: alerts.get(a.saved.id) ?? [] } };
  });
}

/**
 * What the ledger tells a workspace's rows: the last balance a sync noted, and the summary as the
 * last sync left it while that sync is within the runner's schedule (an interval, and half of one
 * and a minute for a sync its site's budget held up); never with LEDGER_SYNC_MINUTES=0.
 */
export function ledgerViews(ctx: Context): LedgerViews {
  const fresh = ctx.ledgerSyncMinutes > 0 ? ctx.ledgerSyncMinutes * 90_000 + 60_000 : 0;
  return {
    lastBalance: (s) => lastBalanceOf(ctx.db, s),
    daysLeft: (s, balance) => daysLeftOf(ctx.db, ownerOfSession(s), balance),
    stored: (sessions, tz) => storedSummaries(ctx.db, sessions, tz, fresh),
    awaiting: (sessions) => awaitingFirstSync(ctx.db, sessions, fresh),
  };
}

/** What an authenticated procedure's context holds about who asks. */
export type AuthedContext = Context & {
  session: LiveSession;
  browser: BrowserAccounts | null;
  workspace: WorkspaceSession | null;
  saved: ScopedAccount | null;
};

/**
 * The live sessions whose ledgers a request may read: the active account, or with `all` every
 * account of the browser's cookie (with Bearer: that session's account only), or of the workspace
 * (its accounts that cannot be read now included: their ledgers stay theirs).
 */
export async function sessionsFor(ctx: AuthedContext, which: "active" | "all"): Promise<LiveSession[]> {
  if (which === "active") return [ctx.session];
  if (ctx.workspace) {
    return (await storedScope(ctx.db, savedAccountsOf(ctx), ctx.workspace.workspaceId)).map((s) => s.session);
  }
  if (!ctx.browser) return [ctx.session];
  return (await listAccounts(ctx.db, ctx.browser)).sessions;
}

/**
 * Whether the request may still read what it started reading (a long export checks between
 * pages): its workspace session, or its own account session and the one of the account read.
 */
export function stillAllowed(ctx: AuthedContext): (readerSessionId: string) => Promise<boolean> {
  return async (readerSessionId) => {
    if (ctx.workspace) return workspaceStore(ctx.db).isLive(ctx.workspace.id);
    const sessions = sessionStore(ctx.db);
    return (
      (await sessions.isLive(ctx.session.id)) &&
      (readerSessionId === ctx.session.id || (await sessions.isLive(readerSessionId)))
    );
  };
}
