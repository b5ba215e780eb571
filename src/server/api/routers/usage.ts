import { logError } from "../../core/log";
import { LedgerBusy, ledgerStatus, syncLedger } from "../../accounts/ledger";
import { accountOf } from "../../accounts/overview";
import type { LiveSession } from "../../session/store";
import type { Context } from "../context";
import { authedProcedure, router } from "../trpc";

/**
 * Starts a sync of the session's account in the background (the first one copies
 * LEDGER_BACKFILL_DAYS, which may take minutes within the site's budget); one already running,
 * here or on another instance, is left to finish.
 */
export function startLedgerSync(ctx: Context, session: LiveSession): void {
  if (!session.site) return;
  const deps = {
    db: ctx.db,
    timeoutMs: ctx.timeoutMs,
    perMinute: ctx.siteRequestsPerMinute,
    maxWaitMs: ctx.siteBudgetWaitMs,
    acceptLanguage: ctx.headers.get("accept-language"),
  };
  syncLedger(ctx.db, accountOf(session), deps, { backfillDays: ctx.ledgerBackfillDays }).catch((error: unknown) => {
    if (error instanceof LedgerBusy) return;
    logError("ledger.sync", error);
  });
}

/** The usage ledger of the signed-in account (design.md 13). */
export const usageRouter = router({
  /** Where the account's ledger stands: entries, the range covered, a sync under way, the last error. */
  status: authedProcedure.query(({ ctx }) => ledgerStatus(ctx.db, accountOf(ctx.session))),

  /** Syncs the account's ledger now (in the background); answers the status as it starts. */
  sync: authedProcedure.mutation(async ({ ctx }) => {
    startLedgerSync(ctx, ctx.session);
    return ledgerStatus(ctx.db, accountOf(ctx.session));
  }),
});
