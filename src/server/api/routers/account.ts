import type { z } from "zod";
import { failure, MSG, type Failure } from "../../core/messages";
import { logsInput, pageInput, parseParams, summaryInput } from "../../accounts/schemas";
import {
  SiteDataError,
  logs,
  summary,
  tokens,
  topups,
  type Account,
  type SiteDataDeps,
} from "../../accounts/site-data";
import { serverTimeZone } from "../../accounts/time";
import type { LiveSession } from "../../session/store";
import type { Context } from "../context";
import { authedProcedure, router } from "../trpc";

/** Parameters arrive as JSON or query strings and are checked here, so a bad one is a message, not a 400. */
const anyInput = (raw: unknown) => raw;

type Ok<T> = { success: true; data: T };

/**
 * Runs one site-data operation for the signed-in account: bad parameters and site failures are
 * answers (`{success:false,message}`), nothing reaches the site for a bad parameter.
 */
async function run<S extends z.ZodType, T>(
  ctx: Context & { session: LiveSession },
  schema: S,
  raw: unknown,
  op: (account: Account, params: z.output<S>, deps: SiteDataDeps) => Promise<T>,
): Promise<Ok<T> | Failure> {
  const params = parseParams(schema, raw);
  if (!params.ok) return failure(params.message);
  const { session } = ctx;
  if (!session.site) return failure(MSG.siteRemoved);
  const account = {
    sessionId: session.id,
    siteId: session.siteId,
    siteUserId: session.siteUserId,
    userId: session.userId,
  };
  const deps: SiteDataDeps = {
    db: ctx.db,
    timeoutMs: ctx.timeoutMs,
    perMinute: ctx.siteRequestsPerMinute,
    maxWaitMs: ctx.siteBudgetWaitMs,
    acceptLanguage: ctx.headers.get("accept-language"),
    refresh: (params.value as { refresh?: boolean }).refresh === true,
  };
  try {
    return { success: true, data: await op(account, params.value, deps) };
  } catch (error) {
    if (error instanceof SiteDataError) return failure(error.message);
    throw error;
  }
}

/** Live data of the signed-in account's site (design.md 12); REST /api/account/* wraps these. */
export const accountRouter = router({
  summary: authedProcedure
    .input(anyInput)
    .query(({ ctx, input }) =>
      run(ctx, summaryInput, input, (account, p, deps) => summary(account, p.tz ?? serverTimeZone(), deps)),
    ),

  logs: authedProcedure
    .input(anyInput)
    .query(({ ctx, input }) =>
      run(ctx, logsInput, input, (account, p, deps) =>
        logs(
          account,
          { page: p.page, pageSize: p.pageSize, type: p.type, model: p.model, token: p.token, from: p.from, to: p.to },
          deps,
        ),
      ),
    ),

  tokens: authedProcedure
    .input(anyInput)
    .query(({ ctx, input }) =>
      run(ctx, pageInput, input, (account, p, deps) => tokens(account, { page: p.page, pageSize: p.pageSize }, deps)),
    ),

  topups: authedProcedure
    .input(anyInput)
    .query(({ ctx, input }) =>
      run(ctx, pageInput, input, (account, p, deps) => topups(account, { page: p.page, pageSize: p.pageSize }, deps)),
    ),
});
