import { failure } from "../../core/messages";
import { logError } from "../../core/log";
import { usageBalance, usageSummary } from "../../accounts/analytics";
import { listAccounts } from "../../accounts/browser-accounts";
import { LedgerBusy, ledgerStatus, syncLedger } from "../../accounts/ledger";
import { accountOf } from "../../accounts/overview";
import { parseParams, usageBalanceInput, usageRange, usageSummaryInput } from "../../accounts/schemas";
import { dayIn, serverTimeZone } from "../../accounts/time";
import type { BrowserAccounts } from "../../session/cookie";
import type { LiveSession } from "../../session/store";
import type { Context } from "../context";
import { anyInput, authedProcedure, router } from "../trpc";

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

/** The usage ledger of the signed-in account(s) (design.md 13). */
export const usageRouter = router({
  /** Where the account's ledger stands: entries, the range covered, a sync under way, the last error. */
  status: authedProcedure.query(({ ctx }) => ledgerStatus(ctx.db, accountOf(ctx.session))),

  /** Syncs the account's ledger now (in the background); answers the status as it starts. */
  sync: authedProcedure.mutation(async ({ ctx }) => {
    startLedgerSync(ctx, ctx.session);
    return ledgerStatus(ctx.db, accountOf(ctx.session));
  }),

  /** Spend, requests and tokens by day, model, token or type; REST GET /api/usage/summary. */
  summary: authedProcedure.input(anyInput).query(async ({ ctx, input }) => {
    const params = parseParams(usageSummaryInput, input);
    if (!params.ok) return failure(params.message);
    const p = params.value;
    const tz = p.tz ?? serverTimeZone();
    const range = usageRange(p, dayIn(tz, Date.now()));
    const sessions = await sessionsFor(ctx, p.accounts);
    const data = await usageSummary(ctx.db, sessions, { ...range, tz, groupBy: p.groupBy, split: p.split });
    return { success: true as const, data };
  }),

  /** The balance over time, the burn rate and the days left; REST GET /api/usage/balance. */
  balance: authedProcedure.input(anyInput).query(async ({ ctx, input }) => {
    const params = parseParams(usageBalanceInput, input);
    if (!params.ok) return failure(params.message);
    const p = params.value;
    const tz = p.tz ?? serverTimeZone();
    const range = usageRange(p, dayIn(tz, Date.now()));
    const sessions = await sessionsFor(ctx, p.accounts);
    return { success: true as const, data: await usageBalance(ctx.db, sessions, { ...range, tz }) };
  }),
});
