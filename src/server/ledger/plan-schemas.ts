import { FIGURES } from "../../shared/figures";
import { z } from "zod";
import { PLAN_PREFERENCES, RESET_PERIODS } from "../gateway/plans";

/** What 套餐 answers (docs/design.md 27): the procedure's output and the OpenAPI document's source. */

const planSchema = z.object({
  id: z.number().int().describe("订阅编号（站点的 subscription id）"),
  planId: z.number().int(),
  title: z.string().describe("套餐名；站点的套餐列表不再列出它时为「套餐 #编号」"),
  status: z
    .enum(["active", "expired", "cancelled"])
    .describe("active 生效中（未到期）、expired 已到期、cancelled 已取消"),
  source: z.string().describe("order 付费购买、balance 用余额购买、admin 管理员赠送"),
  totalUsd: z.number().nullable().describe("每个周期的额度（美元）；null 表示不限额"),
  usedUsd: z.number().describe("本周期已用（美元）"),
  remainingUsd: z.number().nullable().describe("本周期剩余（美元）；不限额时为 null"),
  usedPct: z.number().nullable().describe("本周期已用的百分比；不限额时为 null"),
  resetPeriod: z.enum(RESET_PERIODS).nullable().describe("额度重置周期；站点的套餐列表不再列出它时为 null"),
  nextResetAt: z.iso.datetime().nullable().describe("下次重置额度的时间；不再重置时为 null"),
  startedAt: z.iso.datetime().nullable(),
  endsAt: z.iso.datetime().nullable().describe("到期时间"),
  overflow: z.boolean().describe("额度用完后是否允许改从钱包扣费"),
});

const spendShape = {
  walletSpendUsd: z.number().describe("范围内由钱包支付的消费（美元）"),
  planSpendUsd: z.number().describe("范围内由套餐支付的消费（美元；日志 other.billing_source 为 subscription）"),
  planRequests: z.number().int().describe("范围内由套餐支付的请求数"),
};

const accountPlansSchema = z.object({
  key: z.string().describe("账户标识（不是令牌）"),
  site: z.string(),
  account: z.string(),
  supported: z.boolean().describe("站点是否提供套餐（new-api 自 2026 年 2 月起）"),
  readAt: z.iso.datetime().nullable().describe("最近一次从站点读取套餐的时间；尚未读取时为 null"),
  preference: z
    .enum(PLAN_PREFERENCES)
    .nullable()
    .describe(
      "扣费偏好：subscription_first 优先套餐、wallet_first 优先钱包、subscription_only 仅套餐、wallet_only 仅钱包",
    ),
  plans: z.array(planSchema).describe("生效中的套餐，以及在范围内到期或取消的套餐，先到期的在前"),
  ...spendShape,
  daysLeft: z.number().nullable().describe(`${FIGURES.daysLeft.name}：${FIGURES.daysLeft.definition}`),
  walletDaysLeft: z.number().nullable().describe(FIGURES.walletDaysLeft.definition),
});

export const usagePlansSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    accounts: z.array(accountPlansSchema).describe("站点提供套餐、或范围内有套餐支付的账户"),
    totals: z.object({ ...spendShape, activePlans: z.number().int().describe("生效中的套餐数") }),
  })
  .meta({ id: "UsagePlans" });
export type UsagePlans = z.infer<typeof usagePlansSchema>;
