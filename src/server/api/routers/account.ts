import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { failure, MSG, type Failure } from "../../core/messages";
import { accountOf, overview, rowOf } from "../../accounts/overview";
import {
  accountKeySchema,
  logsInput,
  overviewRowInput,
  pageInput,
  parseParams,
  summaryInput,
} from "../schemas/accounts";
import {
  SiteDataError,
  logs,
  summary,
  tokens,
  topups,
  type Account,
  type SiteDataDeps,
} from "../../site-data/site-data";
import { serverTimeZone } from "../../core/time";
import {
  AccountError,
  listAccounts,
  listed,
  sessionByKey,
  signOutAccount,
  signOutAll,
  switchAccount,
} from "../../accounts/browser-accounts";
import { clearSessionCookie, setBrowserAccounts, type BrowserAccounts } from "../../session/cookie";
import type { LiveSession } from "../../session/store";
import type { Context } from "../context";
import { siteDepsOf } from "../site-deps";
import { anyInput, authedProcedure, router } from "../trpc";

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
  const account = accountOf(session);
  const deps = siteDepsOf(ctx, (params.value as { refresh?: boolean }).refresh === true);
  try {
    return { success: true, data: await op(account, params.value, deps) };
  } catch (error) {
    if (error instanceof SiteDataError) return failure(error.message);
    throw error;
  }
}

const keyInput = z.object({ key: accountKeySchema.meta({ description: "account.list 给出的账户标识" }) });

/** The browser's accounts, or an error for a client that signed in with a Bearer token. */
function browserOf(ctx: { browser: BrowserAccounts | null }): BrowserAccounts {
  if (!ctx.browser) {
    throw new TRPCError({
      code: "BAD_REQUEST",
      message: "多账户只适用于浏览器会话（Cookie）；Bearer 令牌只代表一个账户",
    });
  }
  return ctx.browser;
}

/** Runs an account change; an unknown key is a NOT_FOUND with the reason, and changes nothing. */
async function change<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (error) {
    if (error instanceof AccountError) throw new TRPCError({ code: "NOT_FOUND", message: error.message });
    throw error;
  }
}

/**
 * The accounts of this browser (design.md 11) and the live data of the active one's site
 * (design.md 12); REST /api/account/* wraps the site-data procedures.
 */
export const accountRouter = router({
  /** Every account in this browser, the active first, and those that dropped out since last told. */
  list: authedProcedure.query(async ({ ctx }) => {
    if (!ctx.browser) return { accounts: [listed(ctx.session, true)], dropped: [] };
    const { accounts, dropped, cookie } = await listAccounts(ctx.db, ctx.browser);
    if (dropped.length > 0 || cookie.a.length !== ctx.browser.a.length) {
      await setBrowserAccounts(ctx.resHeaders, cookie, ctx.secure);
    }
    return { accounts, dropped };
  }),

  switch: authedProcedure.input(keyInput).mutation(async ({ ctx, input }) => {
    const next = await change(() => switchAccount(ctx.db, browserOf(ctx), input.key));
    await setBrowserAccounts(ctx.resHeaders, next, ctx.secure);
    return { success: true as const };
  }),

  signOut: authedProcedure.input(keyInput).mutation(async ({ ctx, input }) => {
    const next = await change(() => signOutAccount(ctx.db, browserOf(ctx), input.key));
    await setBrowserAccounts(ctx.resHeaders, next, ctx.secure);
    return { success: true as const, remaining: next.a.length };
  }),

  /**
   * Every account of this browser with its live summary (sites asked side by side) and totals in
   * USD; REST GET /api/accounts/overview. Accounts that dropped out appear once as expired rows.
   */
  overview: authedProcedure.input(anyInput).query(async ({ ctx, input }) => {
    const params = parseParams(summaryInput, input);
    if (!params.ok) return failure(params.message);
    const tz = params.value.tz ?? serverTimeZone();
    const result = await overview(ctx.db, ctx.browser, ctx.session, tz, siteDepsOf(ctx, params.value.refresh === true));
    if (result.cookie && result.rows.some((r) => r.state === "expired")) {
      await setBrowserAccounts(ctx.resHeaders, result.cookie, ctx.secure);
    }
    return { success: true as const, data: { rows: result.rows, totals: result.totals } };
  }),

  /** One account's row of the overview, by key: the dashboard fills the rows in as each site answers. */
  overviewRow: authedProcedure.input(anyInput).query(async ({ ctx, input }) => {
    const params = parseParams(overviewRowInput, input);
    if (!params.ok) throw new TRPCError({ code: "BAD_REQUEST", message: params.message });
    const { key, tz, refresh } = params.value;
    const session = await sessionByKey(ctx.db, ctx.browser, ctx.session, key);
    if (session === undefined) throw new TRPCError({ code: "NOT_FOUND", message: "账户不存在或已退出，请刷新后重试" });
    if (session === null) {
      return {
        state: "expired" as const,
        message: "会话已过期或已在别处退出，请重新登录",
        summary: null,
        daysLeft: null,
      };
    }
    return rowOf(session, tz ?? serverTimeZone(), siteDepsOf(ctx, refresh === true));
  }),

  signOutAll: authedProcedure.mutation(async ({ ctx }) => {
    const ended = await signOutAll(ctx.db, browserOf(ctx));
    clearSessionCookie(ctx.resHeaders, ctx.secure);
    return { success: true as const, ended };
  }),

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
