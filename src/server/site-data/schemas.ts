import { FIGURES } from "../../shared/figures";
import { z } from "zod";
import { FAMILIES, moneySchema } from "../gateway/families";
import { logItemSchema, pagingSchema, tokenItemSchema, topupItemSchema } from "../gateway/reads";

/** What the live reads answer: the procedures' outputs, the domain's types and the OpenAPI document's source. */

const iso = z.iso.datetime();

const amount = (what: string) =>
  z.object({ quota: z.number().describe(`${what}（站点额度单位）`), usd: z.number().describe("折合美元") });

export const summarySchema = z
  .object({
    site: z.object({ id: z.number().int(), name: z.string(), url: z.string(), family: z.enum(FAMILIES) }),
    user: z.object({ id: z.number(), username: z.string(), displayName: z.string(), group: z.string() }),
    money: moneySchema,
    balance: amount("剩余额度"),
    used: amount("已用额度"),
    requestCount: z.number(),
    today: amount("今日消费（tz 时区的零点起）"),
    todayRequests: z
      .number()
      .int()
      .nullable()
      .describe("今日（tz 时区零点起）的消费请求数；one-api 站点无法统计时为 null"),
    fetchedAt: iso,
  })
  .meta({ id: "AccountSummary" });
export type Summary = z.infer<typeof summarySchema>;

const page = pagingSchema.extend({ fetchedAt: iso.describe("从站点取得数据的时间") });

export const logTotalsSchema = z
  .object({
    entries: z.number().int().describe("符合筛选的日志条数（各类型）"),
    requests: z.number().int().describe("其中消费请求的次数"),
    quota: z.number().describe("消费合计（站点额度单位）"),
    usd: z.number().describe("消费合计折合美元"),
    promptTokens: z.number().describe("消费请求的输入 tokens 合计"),
    completionTokens: z.number().describe("消费请求的输出 tokens 合计"),
  })
  .meta({ id: "LogTotals" });
export type LogTotals = z.infer<typeof logTotalsSchema>;

const LOG_RECENT = ["included", "none", "failed", "partial"] as const;

export const logsPageSchema = page
  .extend({
    items: z.array(logItemSchema),
    source: z
      .enum(["site", "ledger"])
      .describe("ledger：来自本服务账本（账本覆盖所查范围时），最近一次同步之后的部分实时读取站点；site：直接读取站点"),
    match: z
      .enum(["exact", "contains"])
      .describe("model、token 的匹配方式：contains 为包含且不区分大小写（账本）；exact 为站点的精确匹配"),
    totals: logTotalsSchema.nullable().describe("符合筛选的全部日志的合计（不只本页）；直接读取站点时为 null"),
    ledger: z
      .object({
        since: iso.describe("账本记录的最早时间；更早的日志直接读取站点"),
        syncedAt: iso.describe("最近一次完整同步的时间"),
        recent: z
          .enum(LOG_RECENT)
          .describe(
            "同步之后的日志：included 已实时读取并包含；none 所查范围不含；failed 站点无法读取，未包含；partial 超过 500 条，只包含最新的 500 条",
          ),
        reason: z.string().nullable().describe("recent 为 failed 时站点无法读取的原因"),
      })
      .nullable()
      .describe("source 为 ledger 时账本的范围；否则为 null"),
    fromLedger: z
      .object({ reason: z.string().describe("站点为何无法读取") })
      .optional()
      .describe(
        "站点无法读取、账本又不完全覆盖所查范围时出现：这一页来自本服务账本中已有的记录（截至 fetchedAt 的同步）",
      ),
  })
  .meta({ id: "LogsPage" });
export type LogsPage = z.infer<typeof logsPageSchema>;

export const tokensPageSchema = page.extend({ items: z.array(tokenItemSchema) }).meta({ id: "TokensPage" });
export type TokensPage = z.infer<typeof tokensPageSchema>;

export const topupsPageSchema = page
  .extend({
    supported: z
      .boolean()
      .describe("站点是否提供用户充值记录（仅新版 new-api）；其他站点的充值在使用日志的 topup 类型中"),
    items: z.array(topupItemSchema),
  })
  .meta({ id: "TopupsPage" });
export type TopupsPage = z.infer<typeof topupsPageSchema>;

const OVERVIEW_STATES = ["ok", "unreachable", "refused", "expired", "syncing"] as const;

/** One account's row of the overview: its summary, or why there is none. */
export const overviewRowSchema = z.object({
  state: z
    .enum(OVERVIEW_STATES)
    .describe("正常、站点无法访问、令牌被拒绝、会话已过期、首次同步中（工作区账户：lastKnown 为添加时站点报告的余额）"),
  message: z.string().nullable().describe("state 不是 ok 时的原因"),
  summary: summarySchema.nullable().describe("与 /api/account/summary 的 data 相同；读取失败时为 null"),
  daysLeft: z.number().nullable().describe(`${FIGURES.daysLeft.name}：${FIGURES.daysLeft.definition}`),
  lastKnown: z
    .object({ balance: amount("余额"), at: iso.describe("记下这个余额的同步时间") })
    .nullable()
    .describe(
      "站点读取失败时：账本最近一次同步记下的余额；首次同步中：添加账户时站点报告的余额；没有记录（或读取成功）时为 null",
    ),
});
export type OverviewRow = z.infer<typeof overviewRowSchema>;
