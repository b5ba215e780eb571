import { FIGURES } from "../../shared/figures";
import { z } from "zod";

/** What the ledger answers: the procedures' outputs, the domain's types and the OpenAPI document's source. */

const iso = z.iso.datetime();

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
export type LedgerStatus = z.infer<typeof ledgerStatusSchema>;

const sums = {
  requests: z.number().int().describe("请求数（type 分组时为各类型日志条数）"),
  quota: z.number().describe("额度（站点额度单位；多个站点时为各站点额度之和）"),
  usd: z.number().describe("折合美元（按各站点的 quota_per_unit）"),
  promptTokens: z.number().int(),
  completionTokens: z.number().int(),
};

const coverageSchema = z.object({
  key: z.string().describe("账户标识（不是令牌）"),
  site: z.object({ id: z.number().int(), name: z.string() }).nullable(),
  userId: z.number(),
  username: z.string(),
  alias: z.string().nullable().describe("工作区给账户起的别名（页面上以它称呼账户）；没有时为 null"),
  oldest: iso.nullable().describe("账本已覆盖范围的起点"),
  newest: iso.nullable().describe("账本已覆盖范围的终点"),
  syncedAt: iso.nullable().describe("上次完成同步的时间"),
});
export type LedgerCoverage = z.infer<typeof coverageSchema>;

const usageRowSchema = z.object({
  key: z.string().describe("日期（YYYY-MM-DD）、小时（YYYY-MM-DD HH:00，tz 时区）、模型名、令牌名或日志类型"),
  ...sums,
  split: z.record(z.string(), z.number()).optional().describe("split=model 时：当天各模型的美元消费"),
});
export type UsageRow = z.infer<typeof usageRowSchema>;

export const usageSummarySchema = z
  .object({
    from: z.string().describe("起始日（含），tz 时区的日历日"),
    to: z.string().describe("结束日（含）"),
    tz: z.string(),
    groupBy: z.enum(["day", "hour", "model", "token", "type"]),
    rows: z.array(usageRowSchema),
    totals: z.object(sums),
    accounts: z.array(coverageSchema).describe("参与统计的账户及其账本覆盖范围"),
  })
  .meta({ id: "UsageSummary" });
export type UsageSummary = z.infer<typeof usageSummarySchema>;

const balancePointSchema = z.object({
  day: z.string(),
  at: iso,
  quota: z.number(),
  usd: z.number(),
  unmatchedUsd: z
    .number()
    .nullable()
    .describe("对账：当天余额变化与日志不符的差额（美元，超过容差时）；相符或无法对账时为 null"),
});
export type BalancePoint = z.infer<typeof balancePointSchema>;

const accountBalanceSchema = coverageSchema.extend({
  series: z.array(balancePointSchema).describe("范围内每天最后一次同步时站点报告的余额"),
  balanceUsd: z.number().nullable().describe("最近一次同步时的余额（美元）；尚未同步时为 null"),
  burnRateUsd: z.number().describe("最近 7 天的日均消费（美元）"),
  daysLeft: z.number().nullable().describe(`${FIGURES.daysLeft.name}：${FIGURES.daysLeft.definition}`),
});
export type AccountBalance = z.infer<typeof accountBalanceSchema>;

export const usageBalanceSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    accounts: z.array(accountBalanceSchema),
    totals: z.object({
      balanceUsd: z.number(),
      burnRateUsd: z.number(),
      daysLeft: z.number().nullable(),
    }),
  })
  .meta({ id: "UsageBalance" });
export type BalanceReport = z.infer<typeof usageBalanceSchema>;
