import { z } from "zod";
import { lastBalanceOf, readersOf, usageBalance, usageSummary } from "../../ledger/analytics";
import { chargeCheck } from "../../ledger/check-view";
import { usageCache } from "../../ledger/cache-view";
import { usageIncome } from "../../ledger/income";
import { usageSpeed } from "../../ledger/speed-view";
import { usagePlans } from "../../ledger/plans-view";
import { usageTrends } from "../../ledger/trends";
import { checkinsOf } from "../../actions/records";
import { ledgerStatus } from "../../ledger/sync-status";
import { accountOf } from "../../accounts/overview";
import {
  accountsRangeInput,
  chargeCheckSuccess,
  usageBalanceSuccess,
  usageCacheInput,
  usageCacheSuccess,
  usageIncomeSuccess,
  usagePlansSuccess,
  usageTrendsSuccess,
  trendsInput,
  usageSpeedSuccess,
  usageSummaryInput,
  usageSummarySuccess,
} from "../schemas/accounts";
import { ledgerStatusSchema } from "../../ledger/schemas";
import { sessionsFor, startLedgerSync } from "../site-deps";
import { authedProcedure, router } from "../trpc";
import { rest } from "../rest-routes";

/** This service's own check-ins, as the ledger's income reads them (actions/ above the ledger). */
const checkinSource =
  (ctx: { db: Parameters<typeof checkinsOf>[0] }) =>
  (owners: Parameters<typeof checkinsOf>[1], from: number, to: number) =>
    checkinsOf(ctx.db, owners, from, to);

/** The usage ledger of the signed-in account(s) (docs/design.md 13). */
export const usageRouter = router({
  /** Where the account's ledger stands: entries, the range covered, a sync under way, the last error. */
  status: authedProcedure
    .meta(rest("GET", "/api/usage/status", { answer: "data" }))
    .output(ledgerStatusSchema)
    .query(({ ctx }) => ledgerStatus(ctx.db, accountOf(ctx.session), ctx.session.heldUntil)),

  /**
   * The balance the account's last sync noted, with when: what 概览 shows while its site cannot
   * be read (docs/design.md 19); null before any sync.
   */
  lastBalance: authedProcedure
    .output(
      z.object({
        success: z.literal(true),
        data: z.object({ balance: z.object({ quota: z.number(), usd: z.number() }), at: z.iso.datetime() }).nullable(),
      }),
    )
    .query(async ({ ctx }) => {
      const last = await lastBalanceOf(ctx.db, ctx.session);
      const data = last ? { balance: { quota: last.quota, usd: last.usd }, at: last.at } : null;
      return { success: true as const, data };
    }),

  /** Syncs the account's ledger now (in the background); answers the status as it starts. */
  sync: authedProcedure
    .meta(rest("POST", "/api/usage/sync", { answer: "data", input: "none" }))
    .output(ledgerStatusSchema)
    .mutation(async ({ ctx }) => {
      startLedgerSync(ctx, ctx.session);
      return ledgerStatus(ctx.db, accountOf(ctx.session));
    }),

  /** Spend, requests and tokens by day, model, token or type; REST GET /api/usage/summary. */
  summary: authedProcedure
    .meta(rest("GET", "/api/usage/summary"))
    .input(usageSummaryInput)
    .output(usageSummarySuccess)
    .query(async ({ ctx, input: p }) => {
      const sessions = await sessionsFor(ctx, p.accounts);
      const data = await usageSummary(ctx.db, sessions, p);
      return { success: true as const, data };
    }),

  /** The balance over time, the burn rate and the days left; REST GET /api/usage/balance. */
  balance: authedProcedure
    .meta(rest("GET", "/api/usage/balance"))
    .input(accountsRangeInput)
    .output(usageBalanceSuccess)
    .query(async ({ ctx, input: p }) => {
      const sessions = await sessionsFor(ctx, p.accounts);
      return { success: true as const, data: await usageBalance(ctx.db, sessions, p) };
    }),

  /**
   * 核对: each charge against its own logged ratios and the site's published list, per account and
   * model, with the worst entries; REST GET /api/usage/check.
   */
  check: authedProcedure
    .meta(
      rest("GET", "/api/usage/check", {
        summary: "核对扣费",
        description:
          "范围内每条消费日志的两项核对，由后台在日志同步后逐条完成（不在读取时计算）：按日志自己记录的 tokens 与倍率，以站点的算法复算" +
          "（new-api 系精确小数、四舍五入；one-hub / done-hub 浮点向上取整，相差 1 视为相符）；与站点公开的价目表（该分组、当时的价格）比对" +
          "计费倍率，并按价目表复算应扣。按账户与模型汇总：实际扣费、应扣、不符条数、多扣；worst 为多扣最多的 10 条。" +
          "日志未记录倍率（one-api）、分段计费、异步任务等无法复算的条目只计入 entries，不作判断。",
      }),
    )
    .input(accountsRangeInput)
    .output(chargeCheckSuccess)
    .query(async ({ ctx, input: q }) => {
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, q.accounts));
      return { success: true as const, data: await chargeCheck(ctx.db, readers, q) };
    }),

  /** The cache: hit rate, reads and writes, what it saved or cost; REST GET /api/usage/cache. */
  cache: authedProcedure
    .meta(
      rest("GET", "/api/usage/cache", {
        summary: "缓存命中与节省",
        description:
          "范围内消费日志的输入 tokens、从缓存读取与写入缓存的 tokens、命中率（读取 ÷ 输入），以及按日志记录的倍率，缓存读取比按完整输入价省下的、" +
          "缓存写入多花的（美元），按天、模型、令牌或账户分组。new-api 系读 other 的 cache_tokens 与 cache_creation_tokens，" +
          "one-hub / done-hub 读 metadata 的 cached_tokens、cached_read_tokens、cached_write_tokens 等；one-api 不记录缓存。" +
          "由后台在日志同步后计入（与核对同一遍）。",
      }),
    )
    .input(usageCacheInput)
    .output(usageCacheSuccess)
    .query(async ({ ctx, input: q }) => {
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, q.accounts));
      return { success: true as const, data: await usageCache(ctx.db, readers, q) };
    }),

  /** Income beside spend per day: top-ups, redeemed codes, rewards, refunds; REST GET /api/usage/income. */
  income: authedProcedure
    .meta(
      rest("GET", "/api/usage/income", {
        summary: "收入与净变化",
        description:
          "范围内每天进入账户的：充值、兑换码、签到与赠送等奖励、退款与补偿（美元），当天的消费和净变化（收入减消费）。" +
          "日志只在文字里写金额的（new-api 的「＄10.000000 额度」）按文字；没写金额的充值按同步保存的站点充值记录；" +
          "本服务代为签到而站点日志当天没有签到记录的，按本服务的签到记录计入，不重复计算。",
      }),
    )
    .input(accountsRangeInput)
    .output(usageIncomeSuccess)
    .query(async ({ ctx, input: q }) => {
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, q.accounts));
      return { success: true as const, data: await usageIncome(ctx.db, readers, q, checkinSource(ctx)) };
    }),

  /** 全部账户's trends: each account's balance at the end of every day, and today's income. */
  trends: authedProcedure
    .meta(
      rest("GET", "/api/usage/trends", {
        summary: "余额走势与今日收入",
        description:
          "范围内（默认近 30 天，至多 92 天）每个账户每天结束时最近一次同步记下的余额（美元，今天为到此刻），各账户之和，" +
          "以及范围最后一天（通常是今天）每个账户的收入（充值、兑换码、签到等奖励、退款）。全部账户页的迷你走势图与合计曲线。",
      }),
    )
    .input(trendsInput)
    .output(usageTrendsSuccess)
    .query(async ({ ctx, input: q }) => {
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, q.accounts));
      return { success: true as const, data: await usageTrends(ctx.db, readers, q, checkinSource(ctx)) };
    }),

  /** How fast each site answers each model: p50 and p90 of total and first-token time. */
  speed: authedProcedure
    .meta(
      rest("GET", "/api/usage/speed", {
        summary: "各站点各模型的速度",
        description:
          "范围内每个站点、每个模型的消费请求的总用时与首字用时的中位数和 90 分位（毫秒），同一站点的多个账户合并计算，" +
          "同一模型最快的站点标 fastest。总用时来自日志（new-api 的 use_time 为整秒，one-api 的 elapsed_time 与 one-hub 的 request_time 为毫秒），" +
          "首字用时来自 new-api 的 other.frt 与 one-hub / done-hub 的 metadata.first_response（多为流式请求）。" +
          "按时间分档计数后插值，精度约为所在档宽度；由后台在日志同步后计入（与核对同一遍）。",
      }),
    )
    .input(accountsRangeInput)
    .output(usageSpeedSuccess)
    .query(async ({ ctx, input: q }) => {
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, q.accounts));
      return { success: true as const, data: await usageSpeed(ctx.db, readers, q) };
    }),

  /** Each account's plans, plan-paid spend apart from the wallet's, and 可用天数 with plans folded in. */
  plans: authedProcedure
    .meta(
      rest("GET", "/api/usage/plans", {
        summary: "套餐与钱包",
        description:
          "new-api 站点出售的套餐（订阅）：每个账户的套餐，本周期已用与剩余、下次重置、到期时间，由同步每 15 分钟读取一次" +
          "（GET /api/subscription/self 与 /api/subscription/plans，从不调用购买或续订）。范围内的消费分为钱包支付与套餐支付" +
          "（日志 other.billing_source 为 subscription 的由套餐支付，钱包未扣费）。daysLeft 按近 7 天的消费速度，" +
          "依扣费偏好先后使用套餐与钱包、套餐按周期重置直到到期，算出还能用的天数；walletDaysLeft 为只用钱包的天数。",
      }),
    )
    .input(accountsRangeInput)
    .output(usagePlansSuccess)
    .query(async ({ ctx, input: q }) => {
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, q.accounts));
      return { success: true as const, data: await usagePlans(ctx.db, readers, q) };
    }),
});
