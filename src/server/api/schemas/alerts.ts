import { z } from "zod";
import { CADENCES } from "../../alerts/digests";
import { alertChannelSchema, alertRuleSchema, alertSchema } from "../../alerts/schemas";
import { RULE_KINDS } from "../../alerts/engine";
import { CHANNEL_TYPES } from "../../alerts/senders";
import { successOf } from "../../core/messages";
import { choice, intParam, intWithDefault } from "./params";
import { closedRange, rangeShape } from "./range";

// 提醒 (docs/design.md 21): inputs, and answers in the success envelope.

const id = intParam(1, 2_147_483_647).meta({ description: "编号" });

/** What a rule's fields mean, for its creation and its change alike. */
const ruleFields = {
  threshold: z.number().nullable().optional().meta({
    description: "balance_below、spend_today_above：美元；days_left_below：天；site_down：分钟（至少 5）",
  }),
  step: z
    .number()
    .nullable()
    .optional()
    .meta({ description: "提醒打开后再加重这么多时再发一次（同单位）；null 不再发" }),
  remind: z.boolean().optional().meta({ description: "持续期间每天提醒一次" }),
  muted: z.boolean().optional().meta({ description: "暂停这条规则" }),
  channels: z.array(id).max(20).optional().meta({ description: "通知渠道编号" }),
};
const success = <T extends z.ZodType>(data: T, name: string) => successOf(data).meta({ id: name });

export const channelInput = z
  .object({
    type: z.enum(CHANNEL_TYPES).meta({ description: "渠道类型" }),
    name: z.string().max(200).meta({ description: "名称，1 到 40 个字符" }),
    url: z
      .string()
      .max(2000)
      .optional()
      .meta({ description: "webhook、ntfy：接收地址；企业微信、钉钉、飞书：可直接粘贴机器人的 Webhook 地址" }),
    secret: z
      .string()
      .max(200)
      .optional()
      .meta({ description: "webhook：签名密钥（不填则生成，只答复一次）；钉钉：加签密钥 SEC…；飞书：签名校验密钥" }),
    to: z.string().max(320).optional().meta({ description: "email：收件地址" }),
    botToken: z.string().max(200).optional().meta({ description: "telegram：Bot Token" }),
    chatId: z.string().max(100).optional().meta({ description: "telegram：Chat ID" }),
    token: z.string().max(500).optional().meta({ description: "ntfy：访问令牌（可选）；机器人：key 或 access_token" }),
  })
  .meta({ id: "AlertChannelRequest" });

export const idInput = z.object({ id });

export const ruleInput = z
  .object({
    kind: z.enum(RULE_KINDS),
    account: z.union([id, z.literal("all")]).default("all"),
    ...ruleFields,
  })
  .meta({ id: "AlertRuleRequest" });

export const ruleUpdateInput = z.object({ id, ...ruleFields });

export const alertsInput = z
  .object({
    state: choice(["open", "all"], "all").meta({ description: "open 只看打开的；all 全部（默认）" }),
    page: intWithDefault(1, 10_000, 1),
    pageSize: intWithDefault(1, 100, 20),
  })
  .prefault({});

export const timeZoneInput = z.object({
  timeZone: z.string().max(64).meta({ description: "IANA 时区名，如 Asia/Shanghai" }),
});

export const channelsSuccess = success(z.object({ channels: z.array(alertChannelSchema) }), "AlertChannelsSuccess");
export const channelCreatedSuccess = success(
  z.object({
    channel: alertChannelSchema,
    secret: z.string().nullable().describe("webhook 的签名密钥：只答复这一次；其他类型为 null"),
  }),
  "AlertChannelCreatedSuccess",
);
export const channelTestSuccess = success(
  z.object({ message: z.string().describe("如「测试消息已送达」") }),
  "AlertChannelTestSuccess",
);
export const rulesSuccess = success(
  z.object({ rules: z.array(alertRuleSchema), timeZone: z.string().describe("计算「今日」所用的时区") }),
  "AlertRulesSuccess",
);
export const ruleSuccess = success(z.object({ rule: alertRuleSchema }), "AlertRuleSuccess");
export const removedSuccess = success(z.object({ removed: z.boolean() }), "AlertRemovedSuccess");
export const alertsSuccess = success(
  z.object({
    page: z.number().int(),
    pageSize: z.number().int(),
    total: z.number().int(),
    open: z.number().int().describe("正在打开的提醒数"),
    alerts: z.array(alertSchema),
  }),
  "AlertsSuccess",
);
export const timeZoneSuccess = success(z.object({ timeZone: z.string() }), "AlertTimeZoneSuccess");

export const reconciliationInput = z
  .object({ account: id.meta({ description: "工作区账户编号" }), ...rangeShape })
  .transform((q, ctx) => closedRange(q, ctx));

const usd = z.number().nullable();
export const reconciliationSuccess = success(
  z.object({
    account: z.object({ id: z.number().int(), name: z.string() }),
    days: z.array(
      z.object({
        day: z.string(),
        from: z.iso.datetime().nullable().describe("当天用来比较的第一个余额快照；不足两个快照时为 null"),
        to: z.iso.datetime().nullable(),
        changeUsd: usd.describe("余额变化"),
        consumptionUsd: z.number().describe("消费"),
        topupsUsd: z.number().describe("充值"),
        rewardsUsd: z.number().describe("签到奖励"),
        refundsUsd: z.number().describe("退款"),
        adjustments: z.number().int().describe("管理员调整等日志中没有金额的记录数"),
        expectedUsd: usd.describe("按日志应有的变化：−消费 + 充值 + 签到奖励 + 退款"),
        differenceUsd: usd.describe("余额变化 − 应有的变化"),
        flagged: z.boolean().describe("差额超过容差（$0.01 或当天消费的 1%）"),
      }),
    ),
  }),
  "ReconciliationSuccess",
);

const digestSchema = z
  .object({
    id: z.number().int(),
    cadence: z
      .enum(CADENCES)
      .describe("daily 每天（前一天）；weekly 每周（前 7 天）；monthly 每月 1 日（上个月，附对账单）"),
    time: z.string().describe("发送时刻（工作区时区），如 09:00"),
    weekday: z.number().int().nullable().describe("每周摘要在星期几发送：1 周一 … 7 周日"),
    channels: z.array(z.number().int()),
    lastPeriod: z.string().nullable().describe("最近一次按时发送所涵盖的时段"),
    lastSentAt: z.iso.datetime().nullable(),
  })
  .meta({ id: "AlertDigest" });

export const digestInput = z.object({
  cadence: z.enum(CADENCES),
  time: z.string().max(5).describe("HH:MM，工作区时区"),
  weekday: z.number().int().min(1).max(7).nullish().meta({ description: "每周摘要：1 周一 … 7 周日（默认 1）" }),
  channels: z.array(z.number().int().positive()).max(20).meta({ description: "通知渠道编号" }),
});
export const digestsSuccess = success(
  z.object({ digests: z.array(digestSchema), timeZone: z.string() }),
  "AlertDigestsSuccess",
);
export const digestSuccess = success(z.object({ digest: digestSchema }), "AlertDigestSuccess");
export const digestSentSuccess = success(
  z.object({ message: z.string().describe("如「摘要已排队发送」") }),
  "AlertDigestSentSuccess",
);

export const linkInput = z.object({ token: z.string().max(100).meta({ description: "摘要中链接的凭据" }) });
export const linkStateSuccess = success(
  z.object({
    state: z.enum(["ready", "used", "expired", "unknown"]),
    month: z.string().nullable(),
    expiresAt: z.iso.datetime().nullable(),
  }),
  "StatementLinkState",
);
