import { z } from "zod";
import { successOf } from "../../core/messages";
import { LOG_TYPES } from "../../gateway/reads";
import { moneySchema } from "../../gateway/families";
import { overviewSchema } from "../../accounts/schemas";
import { ledgerStatusSchema, usageBalanceSchema, usageSummarySchema } from "../../ledger/schemas";
import { chargeCheckSchema, usageCacheSchema, usageIncomeSchema, usageSpeedSchema } from "../../ledger/check-schemas";
import { usagePlansSchema } from "../../ledger/plan-schemas";
import { TRENDS_MAX_DAYS, usageTrendsSchema } from "../../ledger/trends";
import { logsPageSchema, summarySchema, tokensPageSchema, topupsPageSchema } from "../../site-data/schemas";
import { choice, flag, nameParam, optionalParam, pageParam, pageSizeParam } from "./params";
import { closedRange, openRange, rangeShape, tzParam } from "./range";

/** Parameters of the account, usage and export procedures, and their answers in the success envelope. */

const refresh = flag.meta({ description: "1 或 true：不用缓存，立即向站点取数（仍受站点请求预算限制）" });

const paged = { page: pageParam, pageSize: pageSizeParam, refresh };

const summaryShape = { tz: tzParam.meta({ description: "IANA 时区名，如 Asia/Shanghai；默认 UTC" }), refresh };

export const summaryInput = z.object(summaryShape).prefault({});

/** A browser account's key (22 characters), or a workspace account's id. */
export const accountKeySchema = z.string().regex(/^(?:[A-Za-z0-9_-]{22}|\d{1,12})$/, "账户标识无效");

export const overviewRowInput = z.object({ ...summaryShape, key: accountKeySchema });

const logType = optionalParam(z.enum(LOG_TYPES).exclude(["other"])).meta({ description: "日志类型" });

export const logsInput = z
  .object({
    ...paged,
    type: logType,
    model: nameParam.meta({ description: "模型名：账本作答时为包含且不区分大小写，站点作答时为精确匹配" }),
    token: nameParam.meta({ description: "令牌名：匹配方式同 model" }),
    ...rangeShape,
  })
  .prefault({})
  .transform((q, ctx) => openRange(q, ctx));

export const pageInput = z.object(paged).prefault({});

// Answers: each capability's own schema (site-data/, accounts/, ledger/), in the success envelope.

const success = <T extends z.ZodType>(data: T, id: string) => successOf(data).meta({ id });

export const summarySuccess = success(summarySchema, "AccountSummarySuccess");
export const logsSuccess = success(
  logsPageSchema.extend({
    money: moneySchema
      .nullable()
      .describe(
        "站点的货币设置（最近一次探测，随站点保存）：无论答复来自站点还是账本，金额都按它显示；从未探测到时为 null",
      ),
  }),
  "LogsPageSuccess",
);
export const tokensSuccess = success(tokensPageSchema, "TokensPageSuccess");
export const topupsSuccess = success(topupsPageSchema, "TopupsPageSuccess");
export const overviewSuccess = success(overviewSchema, "AccountsOverviewSuccess");

export const ledgerStatusSuccess = success(ledgerStatusSchema, "LedgerStatusSuccess");

// The ledger's analytics.

/** The longest range grouped by hour (a week is 168 rows). */
const MAX_HOURLY_DAYS = 7;

const accountsParam = choice(["active", "all"], "active").meta({
  description: "active：当前账户（默认）；all：本浏览器 Cookie 中的全部账户（Bearer 时只有该会话的账户）",
});

/** A range of days and whose ledgers: the balance, 对账, 核对 and their CSVs. */
export const accountsRangeInput = z
  .object({ ...rangeShape, accounts: accountsParam })
  .prefault({})
  .transform((q, ctx) => closedRange(q, ctx));

export const usageSummaryInput = z
  .object({
    ...rangeShape,
    accounts: accountsParam,
    groupBy: choice(["day", "hour", "model", "token", "type"], "day").meta({
      description: `分组：day 每天、hour 每小时（范围至多 ${MAX_HOURLY_DAYS} 天）、model、token、type`,
    }),
    split: optionalParam(z.enum(["model"])).meta({ description: "groupBy=day 时按模型拆分每天的美元消费" }),
  })
  .prefault({})
  .transform((q, ctx) => {
    const range = closedRange(q, ctx);
    if (q.groupBy === "hour" && range.end - range.start > MAX_HOURLY_DAYS * 86_400 + 3600) {
      ctx.addIssue({ code: "custom", path: ["groupBy"], message: `按小时分组的范围最长 ${MAX_HOURLY_DAYS} 天` });
    }
    return range;
  });

export const usageCacheInput = z
  .object({
    ...rangeShape,
    accounts: accountsParam,
    groupBy: choice(["day", "model", "token", "account"], "day").meta({
      description: "分组：day 每天（默认）、model、token、account",
    }),
  })
  .prefault({})
  .transform((q, ctx) => closedRange(q, ctx));

export const usageSummarySuccess = success(usageSummarySchema, "UsageSummarySuccess");
export const usageCacheSuccess = success(usageCacheSchema, "UsageCacheSuccess");
export const usageIncomeSuccess = success(usageIncomeSchema, "UsageIncomeSuccess");
export const usageSpeedSuccess = success(usageSpeedSchema, "UsageSpeedSuccess");
export const usagePlansSuccess = success(usagePlansSchema, "UsagePlansSuccess");
export const usageTrendsSuccess = success(usageTrendsSchema, "UsageTrendsSuccess");

/** A range of at most TRENDS_MAX_DAYS days (a snapshot read per day), whose ledgers. */
export const trendsInput = z
  .object({ ...rangeShape, accounts: accountsParam })
  .prefault({})
  .transform((q, ctx) => {
    const range = closedRange(q, ctx);
    if (range.end - range.start > TRENDS_MAX_DAYS * 86_400 + 3600) {
      ctx.addIssue({ code: "custom", path: ["from"], message: `余额走势的范围最长 ${TRENDS_MAX_DAYS} 天` });
    }
    return range;
  });
export const usageBalanceSuccess = success(usageBalanceSchema, "UsageBalanceSuccess");
export const chargeCheckSuccess = success(chargeCheckSchema, "ChargeCheckSuccess");

// Exports.

export const exportCsvInput = z
  .object({
    ...rangeShape,
    accounts: accountsParam,
    type: logType,
    model: nameParam.meta({ description: "模型名（精确匹配）" }),
    token: nameParam.meta({ description: "令牌名（精确匹配）" }),
  })
  .prefault({})
  .transform((q, ctx) => closedRange(q, ctx));

export const statementInput = z.object({
  month: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/)
    .refine((m) => m >= "2000-01")
    .meta({ description: "月份 YYYY-MM（必填）" }),
  accounts: accountsParam,
  tz: tzParam.meta({ description: "IANA 时区名，如 Asia/Shanghai；默认 UTC" }),
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

/** A file to download: REST writes it as the response body (the tRPC endpoint cannot carry it). */
export const fileSuccess = successOf(
  z.object({
    filename: z.string(),
    contentType: z.string(),
    body: z.custom<ReadableStream<Uint8Array> | Uint8Array>(
      (v) => v instanceof ReadableStream || v instanceof Uint8Array,
    ),
  }),
);
export type FileData = z.infer<typeof fileSuccess>["data"];
