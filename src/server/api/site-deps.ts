/**
 * What the routers that read an account's site or ledger share: the site-data dependencies a
 * request's context gives, the sessions a request may read, and a ledger sync started from one.
 */
import { listAccounts } from "../accounts/browser-accounts";
import { accountOf } from "../accounts/overview";
import { logError } from "../core/log";
import { LedgerBusy, syncLedger } from "../ledger/sync";
import type { BrowserAccounts } from "../session/cookie";
import type { LiveSession } from "../session/store";
import type { SiteDataDeps } from "../site-data/site-data";
import type { Context } from "./context";

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
  if (!session.site) return;
  syncLedger(ctx.db, accountOf(session), siteDepsOf(ctx), { backfillDays: ctx.ledgerBackfillDays }).catch(
    (error: unknown) => {
      if (error instanceof LedgerBusy) return;
      logError("ledger.sync", error);
    },
  );
}

/**
 * The live sessions whose ledgers a request may read: the active account, or with `all` every
 * account of the browser's cookie (with Bearer: that session's account only).
 */
export async function sessionsFor(
  ctx: Context & { session: LiveSession; browser: BrowserAccounts | null },
  which: "active" | "all",
): Promise<LiveSession[]> {
  if (which === "active" || !ctx.browser) return [ctx.session];
  return (await listAccounts(ctx.db, ctx.browser)).sessions;
}
