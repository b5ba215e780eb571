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

export const logsPageSchema = page
  .extend({
    items: z.array(logItemSchema),
    fromLedger: z
      .object({ reason: z.string().describe("站点为何无法读取") })
      .optional()
      .describe("站点无法读取时出现：这一页来自本服务账本中的记录（截至 fetchedAt 的同步），筛选规则与站点相同"),
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

export const OVERVIEW_STATES = ["ok", "unreachable", "refused", "expired"] as const;
export type OverviewState = (typeof OVERVIEW_STATES)[number];

/** One account's row of the overview: its summary, or why there is none. */
export const overviewRowSchema = z.object({
  state: z.enum(OVERVIEW_STATES).describe("正常、站点无法访问、令牌被拒绝、会话已过期"),
  message: z.string().nullable().describe("state 不是 ok 时的原因"),
  summary: summarySchema.nullable().describe("与 /api/account/summary 的 data 相同；读取失败时为 null"),
  daysLeft: z.number().nullable().describe("按今日的消费速度，余额还能用的天数；今日没有消费时为 null"),
  lastKnown: z
    .object({ balance: amount("余额"), at: iso.describe("记下这个余额的同步时间") })
    .nullable()
    .describe("站点读取失败时：账本最近一次同步记下的余额；没有记录（或读取成功）时为 null"),
});
export type OverviewRow = z.infer<typeof overviewRowSchema>;
