import { accountOf } from "../../accounts/overview";
import type { LiveSession } from "../../session/store";
import { readersOf } from "../../ledger/analytics";
import {
  accountView,
  compareModel,
  modelsLike,
  priceHistory,
  priceTable,
  refreshPrices,
  type PricedAccount,
} from "../../prices/compare";
import { whatIf } from "../../prices/whatif";
import { pricesCsv } from "../../prices/csv";
import { fileSuccess, type FileData } from "../schemas/accounts";
import {
  accountViewSuccess,
  cheapestInput,
  cheapestSuccess,
  compareInput,
  compareSuccess,
  historySuccess,
  tableSuccess,
  whatIfInput,
  whatIfSuccess,
} from "../schemas/prices";
import { sessionsFor, siteDepsOf, type AuthedContext } from "../site-deps";
import { authedProcedure, router } from "../trpc";
import { rest } from "../rest-routes";

/** The caller's accounts (a workspace's saved accounts, or the browser's), their prices read within the hour. */
async function pricedAccounts(ctx: AuthedContext): Promise<PricedAccount[]> {
  return pricedAccountsOf(ctx, await sessionsFor(ctx, "all"));
}

async function pricedAccountsOf(ctx: AuthedContext, sessions: LiveSession[]): Promise<PricedAccount[]> {
  const readers = await readersOf(ctx.db, sessions);
  const bySession = new Map(sessions.map((s) => [`${s.siteId}:${s.siteUserId}`, s]));
  const accounts = readers.map((reader) => ({
    reader,
    account: accountOf(bySession.get(`${reader.siteId}:${reader.siteUserId}`)!),
  }));
  await refreshPrices(
    ctx.db,
    accounts.map((a) => a.account),
    siteDepsOf(ctx),
  );
  return accounts;
}

/** 模型价格 (docs/design.md 22): a model's price on each account, and what the usage would cost elsewhere. */
export const pricesRouter = router({
  /** Every model across the accounts, each account's price of it (模型价格's table). */
  table: authedProcedure
    .meta(rest("GET", "/api/prices"))
    .output(tableSuccess)
    .query(async ({ ctx }) => ({
      success: true as const,
      data: await priceTable(ctx.db, await pricedAccounts(ctx)),
    })),

  /** The table as CSV: a row per model and account. */
  tableCsv: authedProcedure
    .meta(rest("GET", "/api/prices/table.csv", { answer: "file" }))
    .output(fileSuccess)
    .query(async ({ ctx }) => {
      const table = await priceTable(ctx.db, await pricedAccounts(ctx));
      const data: FileData = {
        filename: `prices_${new Date().toISOString().slice(0, 10)}.csv`,
        contentType: "text/csv; charset=utf-8",
        body: pricesCsv(table),
      };
      return { success: true as const, data };
    }),

  compare: authedProcedure
    .meta(rest("GET", "/api/prices/compare"))
    .input(compareInput)
    .output(compareSuccess)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      data: { model: input.model, rows: await compareModel(ctx.db, await pricedAccounts(ctx), input.model) },
    })),

  /**
   * The person's accounts that offer a model, the usable and cheapest first, each with what the
   * range's usage of the model would have cost there (an agent's "which of my accounts is cheapest").
   */
  cheapest: authedProcedure
    .meta(
      rest("GET", "/api/prices/cheapest", {
        summary: "某个模型在哪个账户最便宜",
        description:
          "提供该模型的各账户的价格（已乘分组倍率）与实际计费（effective：价目表 × 核对得出的实际计费倍数），能用的在前、按实际计费从便宜到贵；" +
          "核对发现计费高于价目表的标 overList。usage 是范围内（默认近 30 天）全部账户使用该模型的用量，" +
          "每行的 usageUsd 是同样的用量在该账户实际计费下的花费（缓存计入）。",
      }),
    )
    .input(cheapestInput)
    .output(cheapestSuccess)
    .query(async ({ ctx, input }) => {
      const accounts = await pricedAccounts(ctx);
      const range = { from: input.from, to: input.to, tz: input.tz };
      const [rows, what] = await Promise.all([
        compareModel(ctx.db, accounts, input.model),
        whatIf(ctx.db, accounts, range),
      ]);
      const used = what.rows.find((r) => r.model === input.model) ?? null;
      // No account offers that name: the known ones that hold it ("claude" → claude-sonnet-4, …).
      const suggestions = rows.length === 0 ? await modelsLike(ctx.db, accounts, input.model) : [];
      const costs = new Map((used?.elsewhere ?? []).map((e) => [e.accountId, e.usd]));
      return {
        success: true as const,
        data: {
          model: input.model,
          ...range,
          usage: used && {
            requests: used.requests,
            promptTokens: used.promptTokens,
            completionTokens: used.completionTokens,
            actualUsd: used.actualUsd,
          },
          // compareModel's order: the usable first, then by what each account is actually charged.
          rows: rows.map((r) => ({ ...r, usageUsd: costs.get(r.accountId) ?? null })),
          suggestions,
        },
      };
    }),

  /** A model's list price on each site over time. */
  history: authedProcedure
    .meta(rest("GET", "/api/prices/history"))
    .input(compareInput)
    .output(historySuccess)
    .query(async ({ ctx, input }) => ({
      success: true as const,
      data: { model: input.model, sites: await priceHistory(ctx.db, await pricedAccounts(ctx), input.model) },
    })),

  /**
   * The active account (a workspace's `?account=`): its group, ratio and usable models, and for
   * each model it used in the range the cheapest other account.
   */
  account: authedProcedure
    .meta(rest("GET", "/api/prices/account"))
    .input(whatIfInput)
    .output(accountViewSuccess)
    .query(async ({ ctx, input }) => {
      const accounts = await pricedAccounts(ctx);
      const self =
        accounts.find(
          (a) => a.reader.siteId === ctx.session.siteId && a.reader.siteUserId === ctx.session.siteUserId,
        ) ?? (await pricedAccountsOf(ctx, [ctx.session]))[0]!;
      return { success: true as const, data: await accountView(ctx.db, accounts, self, input) };
    }),

  whatif: authedProcedure
    .meta(rest("GET", "/api/prices/whatif"))
    .input(whatIfInput)
    .output(whatIfSuccess)
    .query(async ({ ctx, input }) => {
      const result = await whatIf(ctx.db, await pricedAccounts(ctx), input);
      return { success: true as const, data: { from: input.from, to: input.to, tz: input.tz, ...result } };
    }),
});
