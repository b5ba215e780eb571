import { z } from "zod";
import { Refusal, answered } from "../../core/errors";
import { doneSchema, failure, MSG, orFailure, type Failure } from "../../core/messages";
import { accountListSchema } from "../../accounts/schemas";
import { covers, ledgerLogs, logCoverage, logNames, matching } from "../../ledger/log-view";
import { overviewRowSchema, type LogsPage } from "../../site-data/schemas";
import { accountOf, overview, rowOf } from "../../accounts/overview";
import {
  accountKeySchema,
  logsInput,
  logsSuccess,
  overviewRowInput,
  overviewSuccess,
  pageInput,
  summaryInput,
  summarySuccess,
  tokensSuccess,
  topupsSuccess,
} from "../schemas/accounts";
import { logs, logsSince, summary, tokens, topups, type Account, type SiteDataDeps } from "../../site-data/site-data";
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
import { listWorkspace, storedRows, workspaceOverview, workspaceRow } from "../../workspace/overview";
import { workspaceStore } from "../../workspace/workspaces";
import type { LiveSession } from "../../session/store";
import { ledgerViews, siteDepsOf, withJobStatus, type AuthedContext } from "../site-deps";
import { authedProcedure, router, savedAccountsOf, viewerProcedure } from "../trpc";
import { rest } from "../rest-routes";
import { siteRegistry } from "../../sites/registry";

type Ok<T> = { success: true; data: T };

/**
 * Runs one site-data operation for the signed-in account: a site's failure is an answer
 * (`{success:false,message}`, as docs/api.md says), never an error.
 */
async function run<T>(
  ctx: AuthedContext,
  refresh: boolean | undefined,
  op: (account: Account, deps: SiteDataDeps) => Promise<T>,
): Promise<Ok<T> | Failure> {
  const { session } = ctx;
  // A workspace's account whose site cannot be read now says why (需要重新授权, 站点已移除).
  if (ctx.saved?.problem) return failure(ctx.saved.problem);
  if (!session.site) return failure(MSG.siteRemoved);
  return { success: true, data: await op(accountOf(session), siteDepsOf(ctx, refresh === true)) };
}

/**
 * 使用日志's page: from the ledger where it covers the range (the newest part read live), else
 * from the site, else, the site failing, the ledger's copy, said so.
 */
async function logsAnswer(ctx: AuthedContext, p: z.output<typeof logsInput>): Promise<Ok<LogsPage> | Failure> {
  const query = {
    page: p.page,
    pageSize: p.pageSize,
    type: p.type,
    model: p.model,
    token: p.token,
    from: p.start,
    to: p.end === undefined ? undefined : p.end - 1,
  };
  const coverage = await logCoverage(ctx.db, ctx.session);
  if (covers(coverage, query)) {
    const since = coverage.newest + 1;
    const recent =
      query.to !== undefined && query.to < since
        ? null
        : await answered(
            run(ctx, p.refresh, (account, deps) =>
              logsSince(account, { type: query.type, from: Math.max(since, query.from ?? since), to: query.to }, deps),
            ),
          );
    const page = await ledgerLogs(ctx.db, ctx.session, query, {
      before: recent?.success ? matching(recent.data.items, query) : [],
      through: coverage.newest,
      fetchedAt: recent?.success ? new Date().toISOString() : coverage.syncedAt.toISOString(),
    });
    if (page) {
      return {
        success: true as const,
        data: {
          ...page,
          source: "ledger" as const,
          match: "contains" as const,
          ledger: {
            since: new Date(coverage.oldest * 1000).toISOString(),
            syncedAt: coverage.syncedAt.toISOString(),
            recent: !recent ? "none" : !recent.success ? "failed" : recent.data.complete ? "included" : "partial",
            reason: recent && !recent.success ? recent.message : null,
          } as const,
        },
      };
    }
  }
  // A site that cannot be read now: the ledger's copy, said so.
  const live = await answered(run(ctx, p.refresh, (account, deps) => logs(account, query, deps)));
  const site = { source: "site" as const, match: "exact" as const, totals: null, ledger: null };
  if (live.success) return { success: true as const, data: { ...live.data, ...site } };
  const stored = coverage
    ? await ledgerLogs(ctx.db, ctx.session, query, { fetchedAt: coverage.syncedAt.toISOString() })
    : null;
  if (!stored) return live;
  return {
    success: true as const,
    data: {
      ...stored,
      source: "ledger" as const,
      match: "contains" as const,
      ledger: null,
      fromLedger: { reason: live.message },
    },
  };
}

/**
 * The answer with the site's money settings as last probed (kept with the site): amounts are shown
 * the same way whether the site or the ledger answered, and while the site cannot be read.
 */
async function withMoney<T extends object>(ctx: AuthedContext, answer: Ok<T> | Failure) {
  if (!answer.success) return answer;
  const money = (await siteRegistry(ctx.db).profiled(ctx.session.siteId))?.money ?? null;
  return { success: true as const, data: { ...answer.data, money } };
}

/** The gateway account's session of a viewer that is no workspace. */
function own(ctx: { account: { session: LiveSession; browser: BrowserAccounts | null } | null }) {
  if (!ctx.account) throw new Refusal(MSG.unauthenticated, "UNAUTHORIZED");
  return ctx.account;
}

const keyInput = z.object({ key: accountKeySchema.meta({ description: "account.list 给出的账户标识" }) });

/** The browser's accounts, or an error for a client that signed in with a Bearer token or a workspace. */
function browserOf(ctx: { browser: BrowserAccounts | null; workspace: unknown }): BrowserAccounts {
  if (ctx.workspace) throw new Refusal("工作区的账户请在账户管理中添加或移除", "BAD_REQUEST");
  if (!ctx.browser) {
    throw new Refusal("多账户只适用于浏览器会话（Cookie）；Bearer 令牌只代表一个账户", "BAD_REQUEST");
  }
  return ctx.browser;
}

/**
 * The accounts of this browser (docs/design.md 11) and the live data of the active one's site
 * (docs/design.md 12); REST /api/account/* wraps the site-data procedures.
 */
export const accountRouter = router({
  /** Every account in this browser, the active first, and those that dropped out since last told. */
  list: viewerProcedure.output(accountListSchema).query(async ({ ctx }) => {
    if (ctx.workspace) {
      const { workspaceId, activeAccountId } = ctx.workspace;
      const accounts = await listWorkspace(ctx.db, savedAccountsOf(ctx), workspaceId, activeAccountId);
      return { accounts: await withJobStatus(ctx, workspaceId, accounts), dropped: [] };
    }
    const { session, browser } = own(ctx);
    if (!browser) return { accounts: [listed(session, true)], dropped: [] };
    const { accounts, dropped, cookie } = await listAccounts(ctx.db, browser);
    if (dropped.length > 0 || cookie.a.length !== browser.a.length) {
      await setBrowserAccounts(ctx.resHeaders, cookie, ctx.secure);
    }
    return { accounts, dropped };
  }),

  /** The key of the account a request is about: a page is rendered for it and names it on every call. */
  current: authedProcedure
    .output(z.object({ key: z.string() }))
    .query(({ ctx }) => ({ key: ctx.session.key ?? listed(ctx.session, true).key })),

  switch: viewerProcedure
    .input(keyInput)
    .output(doneSchema)
    .mutation(async ({ ctx, input }) => {
      if (ctx.workspace) {
        const saved = await savedAccountsOf(ctx).get(ctx.workspace.workspaceId, Number(input.key));
        await workspaceStore(ctx.db).setActiveAccount(ctx.workspace.id, saved.id);
        return { success: true as const };
      }
      const next = await switchAccount(ctx.db, browserOf({ ...own(ctx), workspace: null }), input.key);
      await setBrowserAccounts(ctx.resHeaders, next, ctx.secure);
      return { success: true as const };
    }),

  signOut: authedProcedure
    .input(keyInput)
    .output(doneSchema.extend({ remaining: z.number().int() }))
    .mutation(async ({ ctx, input }) => {
      const next = await signOutAccount(ctx.db, browserOf(ctx), input.key);
      await setBrowserAccounts(ctx.resHeaders, next, ctx.secure);
      return { success: true as const, remaining: next.a.length };
    }),

  /**
   * Every account of this browser with its live summary (sites asked side by side) and totals in
   * USD; REST GET /api/accounts/overview. Accounts that dropped out appear once as expired rows.
   */
  overview: viewerProcedure
    .meta(rest("GET", "/api/accounts/overview"))
    .input(summaryInput)
    .output(overviewSuccess)
    .query(async ({ ctx, input }) => {
      const ledger = ledgerViews(ctx);
      const deps = siteDepsOf(ctx, input.refresh === true);
      if (ctx.workspace) {
        const { workspaceId, activeAccountId } = ctx.workspace;
        const accounts = savedAccountsOf(ctx);
        const data = await workspaceOverview(ctx.db, accounts, workspaceId, activeAccountId, input.tz, deps, ledger);
        return { success: true as const, data };
      }
      const { session, browser } = own(ctx);
      const result = await overview(ctx.db, browser, session, input.tz, deps, ledger);
      if (result.cookie && result.rows.some((r) => r.state === "expired")) {
        await setBrowserAccounts(ctx.resHeaders, result.cookie, ctx.secure);
      }
      return { success: true as const, data: { rows: result.rows, totals: result.totals } };
    }),

  /**
   * A workspace's rows the ledger holds fresh (its job runner's last syncs), in one answer and
   * asking no site: the dashboard shows them at once and asks overviewRow only for the others.
   * Empty for an account session (its rows are read live).
   */
  storedRows: viewerProcedure
    .input(summaryInput)
    .output(z.object({ rows: z.array(z.object({ key: z.string(), row: overviewRowSchema })) }))
    .query(async ({ ctx, input }) => {
      if (!ctx.workspace) return { rows: [] };
      const accounts = savedAccountsOf(ctx);
      return { rows: await storedRows(ctx.db, accounts, ctx.workspace.workspaceId, input.tz, ledgerViews(ctx)) };
    }),

  /** One account's row of the overview, by key: the dashboard fills the rows in as each site answers. */
  overviewRow: viewerProcedure
    .input(overviewRowInput)
    .output(overviewRowSchema)
    .query(async ({ ctx, input }) => {
      const { key, tz, refresh } = input;
      const ledger = ledgerViews(ctx);
      const deps = siteDepsOf(ctx, refresh === true);
      if (ctx.workspace) {
        const { workspaceId, activeAccountId } = ctx.workspace;
        const id = Number(key);
        const accounts = savedAccountsOf(ctx);
        return workspaceRow(ctx.db, accounts, workspaceId, id, tz, deps, ledger, id === activeAccountId);
      }
      const { session: own_, browser } = own(ctx);
      const session = await sessionByKey(ctx.db, browser, own_, key);
      if (session === undefined) throw new AccountError("账户不存在或已退出，请刷新后重试");
      if (session === null) {
        return {
          state: "expired" as const,
          message: "会话已过期或已在别处退出，请重新登录",
          summary: null,
          daysLeft: null,
          lastKnown: null,
        };
      }
      return rowOf(session, tz, deps, ledger);
    }),

  signOutAll: authedProcedure.output(doneSchema.extend({ ended: z.number().int() })).mutation(async ({ ctx }) => {
    const ended = await signOutAll(ctx.db, browserOf(ctx));
    clearSessionCookie(ctx.resHeaders, ctx.secure);
    return { success: true as const, ended };
  }),

  summary: authedProcedure
    .meta(rest("GET", "/api/account/summary"))
    .input(summaryInput)
    .output(orFailure(summarySuccess))
    .query(({ ctx, input }) => run(ctx, input.refresh, (account, deps) => summary(account, input.tz, deps))),

  /**
   * A page of the usage log. From the ledger when it holds the whole range (filters matched as parts
   * of names, with the range's totals), the site read only for what it logged since the last sync;
   * else from the site, and while the site cannot be read, from what the ledger has, marked so.
   */
  logs: authedProcedure
    .meta(rest("GET", "/api/account/logs"))
    .input(logsInput)
    .output(orFailure(logsSuccess))
    .query(async ({ ctx, input: p }) => withMoney(ctx, await logsAnswer(ctx, p))),

  /** The model and token names the ledger knows for the account, for the log's filter pickers. */
  logNames: authedProcedure
    .output(z.object({ models: z.array(z.string()), tokens: z.array(z.string()) }))
    .query(({ ctx }) => logNames(ctx.db, ctx.session)),

  tokens: authedProcedure
    .meta(rest("GET", "/api/account/tokens"))
    .input(pageInput)
    .output(orFailure(tokensSuccess))
    .query(({ ctx, input: p }) => run(ctx, p.refresh, (account, deps) => tokens(account, p, deps))),

  topups: authedProcedure
    .meta(rest("GET", "/api/account/topups"))
    .input(pageInput)
    .output(orFailure(topupsSuccess))
    .query(({ ctx, input: p }) => run(ctx, p.refresh, (account, deps) => topups(account, p, deps))),
});
