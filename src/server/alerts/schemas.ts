import { z } from "zod";
import { RULE_KINDS } from "./engine";
import { CHANNEL_TYPES } from "./senders";

/** What the alert procedures answer: their outputs and the OpenAPI document's schemas. */

const iso = z.iso.datetime();

export const alertChannelSchema = z
  .object({
    id: z.number().int(),
    type: z
      .enum(CHANNEL_TYPES)
      .describe(
        "webhook（JSON POST，带 HMAC-SHA256 签名）、email、telegram、ntfy、wecom 企业微信、dingtalk 钉钉、feishu 飞书",
      ),
    name: z.string(),
    target: z.string().describe("地址（不含查询参数）；密钥从不答复"),
    createdAt: iso,
  })
  .meta({ id: "AlertChannel" });
export type AlertChannelView = z.infer<typeof alertChannelSchema>;

export const alertRuleSchema = z
  .object({
    id: z.number().int(),
    kind: z
      .enum(RULE_KINDS)
      .describe(
        "balance_below 余额低于（美元）；days_left_below 按近 7 天消费余额可用天数少于；spend_today_above 今日消费超过（美元）；" +
          "token_refused 站点拒绝令牌；site_down 站点无法访问超过（分钟）；checkin_failed 自动签到失败或需手动签到；" +
          "unmatched_move 昨天或今天余额变化与日志不符超过（美元）；spend_spike 今日到此刻的消费超过近 7 天同一时刻中位数的倍数；" +
          "price_changed 近 7 天用过的模型在其站点 24 小时内涨价超过（%），或已下架；" +
          "overcharged_above 近 24 小时扣费高于日志倍率或站点价目表的金额超过（美元）；" +
          "overcharged_share_above 近 24 小时多扣占这段时间消费超过（%）；" +
          "plan_ending_within 生效中的套餐在这么多天内到期；plan_used_above 套餐本周期已用超过（%）",
      ),
    account: z.union([z.number().int(), z.literal("all")]).describe("工作区账户 id，或 all 表示全部账户"),
    threshold: z.number().nullable(),
    step: z.number().nullable().describe("已打开的提醒再加重这么多时再发一次；null 不再发"),
    remind: z.boolean().describe("持续期间每天提醒一次"),
    muted: z.boolean(),
    channels: z.array(z.number().int()),
    createdAt: iso,
  })
  .meta({ id: "AlertRule" });
export type AlertRuleView = z.infer<typeof alertRuleSchema>;

const alertDeliverySchema = z
  .object({
    channelId: z.number().int(),
    event: z.enum(["opened", "reminder", "escalated", "resolved"]),
    status: z
      .enum(["pending", "sent", "failed"])
      .describe("pending 待发送或等待重试；sent 已送达；failed 多次失败后放弃"),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    at: iso.describe("送达时间，或下次重试的时间"),
  })
  .meta({ id: "AlertDelivery" });

export const alertSchema = z
  .object({
    id: z.number().int(),
    rule: z.object({ id: z.number().int(), kind: z.enum(RULE_KINDS), threshold: z.number().nullable() }),
    account: z.object({ id: z.number().int(), name: z.string() }),
    state: z.enum(["open", "resolved"]),
    message: z.string(),
    value: z.number().nullable(),
    openedAt: iso,
    resolvedAt: iso.nullable(),
    deliveries: z.array(alertDeliverySchema),
  })
  .meta({ id: "Alert" });
export type AlertView = z.infer<typeof alertSchema>;
