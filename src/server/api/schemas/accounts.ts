import { z } from "zod";
import { DISPLAY_TYPES, FAMILIES } from "../../gateway/families";
import { LOG_TYPES, TOKEN_STATUSES } from "../../gateway/reads";
import { choice, flag, intWithDefault, nameParam, optionalParam } from "./params";
import { closedRange, openRange, rangeShape, tzParam } from "./range";

/** Parameters and answers of the site-data operations. */

const MAX_PAGE = 10_000;

const paged = {
  page: intWithDefault(1, MAX_PAGE, 1),
  pageSize: intWithDefault(1, 100, 20),
  refresh: flag,
};

const summaryShape = { tz: tzParam, refresh: flag };

export const summaryInput = z.object(summaryShape).prefault({});

export const accountKeySchema = z.string().regex(/^[A-Za-z0-9_-]{22}$/, "账户标识无效");

export const overviewRowInput = z.object({ ...summaryShape, key: accountKeySchema });

const logType = optionalParam(z.enum(LOG_TYPES).exclude(["other"]));

export const logsInput = z
  .object({ ...paged, type: logType, model: nameParam, token: nameParam, ...rangeShape })
  .prefault({})
  .transform((q, ctx) => openRange(q, ctx));

export const pageInput = z.object(paged).prefault({});

// Answers (the OpenAPI document's source; the procedures build them in site-data.ts).

const amount = (what: string) =>
  z.object({ quota: z.number().describe(`${what}（站点额度单位）`), usd: z.number().describe("折合美元") });

export const moneySchema = z
  .object({
    quotaPerUnit: z.number().describe("每 1 美元对应的额度单位（站点的 quota_per_unit）"),
    display: z.enum(DISPLAY_TYPES).describe("站点的显示方式：美元、人民币、自定义货币，或直接显示额度"),
    symbol: z.string().describe("货币符号（TOKENS 时为空）"),
    rate: z.number().describe("1 美元折合多少显示货币"),
  })
  .meta({ id: "Money" });

const pagingShape = {
  page: z.number().int(),
  pageSize: z.number().int().describe("每页条数（与请求相同）"),
  total: z.number().int().nullable().describe("总条数；站点不提供时为 null"),
  hasMore: z.boolean(),
  fetchedAt: z.iso.datetime().describe("从站点取得数据的时间"),
};

const iso = z.iso.datetime();

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

export const logItemSchema = z
  .object({
    createdAt: iso.nullable().describe("站点给出的时间不可能（1970 年以前或 9999 年以后）时为 null"),
    type: z.enum(LOG_TYPES),
    model: z.string(),
    tokenName: z.string(),
    quota: z.number(),
    usd: z.number(),
    promptTokens: z.number(),
    completionTokens: z.number(),
    durationMs: z.number().nullable(),
    stream: z.boolean(),
    content: z.string(),
  })
  .meta({ id: "LogItem" });

export const logsPageSchema = z.object({ ...pagingShape, items: z.array(logItemSchema) }).meta({ id: "LogsPage" });

export const tokenItemSchema = z
  .object({
    id: z.number(),
    name: z.string(),
    key: z.string().describe("总是打码：前 4 位 + **** + 后 4 位；完整密钥从不经过本服务"),
    status: z.enum(TOKEN_STATUSES),
    remainQuota: z.number(),
    remainUsd: z.number(),
    unlimited: z.boolean(),
    usedQuota: z.number(),
    usedUsd: z.number(),
    expiresAt: iso.nullable().describe("永不过期时为 null"),
    createdAt: iso.nullable(),
    lastUsedAt: iso.nullable(),
    group: z.string(),
  })
  .meta({ id: "TokenItem" });

export const tokensPageSchema = z
  .object({ ...pagingShape, items: z.array(tokenItemSchema) })
  .meta({ id: "TokensPage" });

export const topupItemSchema = z
  .object({
    createdAt: iso.nullable(),
    completedAt: iso.nullable(),
    amountUsd: z.number().describe("充值的美元额度"),
    money: z.number().describe("实付金额（站点货币）"),
    method: z.string(),
    status: z.string().describe("pending | success | failed | expired"),
    tradeNo: z.string(),
  })
  .meta({ id: "TopupItem" });

export const topupsPageSchema = z
  .object({
    ...pagingShape,
    supported: z
      .boolean()
      .describe("站点是否提供用户充值记录（仅新版 new-api）；其他站点的充值在使用日志的 topup 类型中"),
    items: z.array(topupItemSchema),
  })
  .meta({ id: "TopupsPage" });

export const overviewRowSchema = z
  .object({
    key: z.string().describe("账户标识（不是令牌）"),
    active: z.boolean(),
    site: z.object({ id: z.number().int(), name: z.string(), url: z.string() }).nullable(),
    userId: z.number(),
    username: z.string(),
    displayName: z.string(),
    expiresAt: z.string().describe("会话到期时间（ISO 8601）；已过期的行为空字符串"),
    state: z.enum(["ok", "unreachable", "refused", "expired"]).describe("正常、站点无法访问、令牌被拒绝、会话已过期"),
    message: z.string().nullable().describe("state 不是 ok 时的原因"),
    summary: summarySchema.nullable().describe("与 /api/account/summary 的 data 相同；读取失败时为 null"),
    daysLeft: z.number().nullable().describe("按今日的消费速度，余额还能用的天数；今日没有消费时为 null"),
  })
  .meta({ id: "OverviewRow" });

export const overviewSchema = z
  .object({
    rows: z.array(overviewRowSchema),
    totals: z.object({
      balanceUsd: z.number().describe("各账户剩余额度折合美元之和（按各站点的 quota_per_unit）"),
      todayUsd: z.number(),
      todayRequests: z.number().int(),
      accounts: z.number().int().describe("计入合计的账户数（state 为 ok 的账户）"),
      convertedAccounts: z.number().int().describe("其中站点以其他货币或额度显示、已折算回美元的账户数"),
    }),
  })
  .meta({ id: "AccountsOverview" });

const success = <T extends z.ZodType>(data: T, id: string) => z.object({ success: z.literal(true), data }).meta({ id });

export const summarySuccess = success(summarySchema, "AccountSummarySuccess");
export const logsSuccess = success(logsPageSchema, "LogsPageSuccess");
export const tokensSuccess = success(tokensPageSchema, "TokensPageSuccess");
export const topupsSuccess = success(topupsPageSchema, "TopupsPageSuccess");
export const overviewSuccess = success(overviewSchema, "AccountsOverviewSuccess");

export const ledgerStatusSchema = z
  .object({
    running: z.boolean().describe("是否正在同步（本实例或其他实例）"),
    entries: z.number().int().describe("账本中该账户的日志条数"),
    oldest: iso.nullable().describe("已覆盖范围的起点"),
    newest: iso.nullable().describe("已覆盖范围的终点"),
    syncedAt: iso.nullable().describe("上次完成同步的时间"),
    progress: z.number().min(0).max(1).nullable().describe("同步进行中时，当前时间窗已读取的比例"),
    lastError: z.string().nullable().describe("上次同步失败的原因；成功后清空"),
    skipped: z
      .object({ count: z.number().int(), reason: z.string().nullable() })
      .describe("因超出合理范围（时间不可能、数值过大、同一秒内条目过多）而拒收的条目数与最近一次的原因"),
  })
  .meta({ id: "LedgerStatus" });

export const ledgerStatusSuccess = success(ledgerStatusSchema, "LedgerStatusSuccess");

// The ledger's analytics.

const accountsParam = choice(["active", "all"], "active").meta({
  description: "active：当前账户；all：本浏览器的全部账户",
});

export const usageBalanceInput = z
  .object({ ...rangeShape, accounts: accountsParam })
  .prefault({})
  .transform((q, ctx) => closedRange(q, ctx));

export const usageSummaryInput = z
  .object({
    ...rangeShape,
    accounts: accountsParam,
    groupBy: choice(["day", "model", "token", "type"], "day"),
    split: optionalParam(z.enum(["model"])),
  })
  .prefault({})
  .transform((q, ctx) => closedRange(q, ctx));

const sums = {
  requests: z.number().int().describe("请求数（type 分组时为各类型日志条数）"),
  quota: z.number().describe("额度（站点额度单位；多个站点时为各站点额度之和）"),
  usd: z.number().describe("折合美元（按各站点的 quota_per_unit）"),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
};

const coverageShape = {
  key: z.string().describe("账户标识（不是令牌）"),
  site: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  userId: z.number(),
  username: z.string(),
  oldest: iso.nullable().describe("账本已覆盖范围的起点"),
  newest: iso.nullable().describe("账本已覆盖范围的终点"),
  syncedAt: iso.nullable().describe("上次完成同步的时间"),
};

export const usageSummarySchema = z
  .object({
    from: z.string().describe("起始日（含），tz 时区的日历日"),
    to: z.string().describe("结束日（含）"),
    tz: z.string(),
    groupBy: z.enum(["day", "model", "token", "type"]),
    rows: z.array(
      z.object({
        key: z.string().describe("日期（YYYY-MM-DD）、模型名、令牌名或日志类型"),
        ...sums,
        split: z.record(z.string(), z.number()).optional().describe("split=model 时：当天各模型的美元消费"),
      }),
    ),
    totals: z.object(sums),
    accounts: z.array(z.object(coverageShape)).describe("参与统计的账户及其账本覆盖范围"),
  })
  .meta({ id: "UsageSummary" });

export const usageBalanceSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    accounts: z.array(
      z.object({
        ...coverageShape,
        series: z
          .array(z.object({ day: z.string(), at: iso, quota: z.number(), usd: z.number() }))
          .describe("范围内每天最后一次同步时站点报告的余额"),
        balanceUsd: z.number().nullable().describe("最近一次同步时的余额（美元）；尚未同步时为 null"),
        burnRateUsd: z.number().describe("最近 7 天的日均消费（美元）"),
        daysLeft: z.number().nullable().describe("按日均消费，余额还能用的天数；没有消费时为 null"),
      }),
    ),
    totals: z.object({
      balanceUsd: z.number(),
      burnRateUsd: z.number(),
      daysLeft: z.number().nullable(),
    }),
  })
  .meta({ id: "UsageBalance" });

export const usageSummarySuccess = success(usageSummarySchema, "UsageSummarySuccess");
export const usageBalanceSuccess = success(usageBalanceSchema, "UsageBalanceSuccess");

// Exports.

export const exportCsvInput = z
  .object({ ...rangeShape, accounts: accountsParam, type: logType, model: nameParam, token: nameParam })
  .prefault({})
  .transform((q, ctx) => closedRange(q, ctx));

export const statementInput = z.object({
  month: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/)
    .refine((m) => m >= "2000-01"),
  accounts: accountsParam,
  tz: tzParam,
});

export const exportCountSchema = z
  .object({
    rows: z.number().int().describe("导出将包含的行数"),
    from: z.string(),
    to: z.string(),
    filename: z.string().describe("下载时的文件名"),
  })
  .meta({ id: "ExportCount" });

export const exportCountSuccess = success(exportCountSchema, "ExportCountSuccess");
