import { z } from "zod";
import { moneySchema } from "../gateway/families";

/** What the writes answer: the procedures' outputs and the OpenAPI document's source. */

const iso = z.iso.datetime();

export const actionRecordSchema = z
  .object({
    at: iso,
    kind: z
      .enum(["redeem", "checkin", "proxy"])
      .describe("redeem 兑换码；checkin 签到；proxy 经 /api/site 代理的写请求"),
    ok: z.boolean().describe("站点是否接受"),
    message: z.string().describe("站点的回答（说明文字）"),
    quota: z.number().nullable().describe("增加的额度（站点额度单位）；没有时为 null"),
    device: z.string().describe("从哪里操作：浏览器与系统、API、自动签到"),
  })
  .meta({ id: "ActionRecord" });
export type ActionRecord = z.infer<typeof actionRecordSchema>;

export const actionRecordsSchema = z
  .object({
    page: z.number().int(),
    pageSize: z.number().int(),
    total: z.number().int(),
    hasMore: z.boolean(),
    items: z.array(actionRecordSchema),
  })
  .meta({ id: "ActionRecords" });

export const redeemResultSchema = z
  .object({
    quota: z.number().describe("增加的额度（站点额度单位）"),
    usd: z.number().describe("折合美元"),
    money: moneySchema,
    message: z.string().describe("给人看的结果，如「兑换成功，增加 $10.00」"),
  })
  .meta({ id: "RedeemResult" });
export type RedeemResult = z.infer<typeof redeemResultSchema>;

export const CHECKIN_STATES = ["available", "done", "manual", "disabled", "unsupported"] as const;
export type CheckinState = (typeof CHECKIN_STATES)[number];

export const checkinStatusSchema = z
  .object({
    state: z
      .enum(CHECKIN_STATES)
      .describe(
        "available 今天可以签到；done 今天已签到；manual 站点要求人机验证，需在站点页面手动签到；disabled 站点未开启签到；unsupported 这类站点没有签到",
      ),
    message: z.string().describe("给人看的状态说明"),
    month: z
      .object({
        checkins: z.number().int(),
        quota: z.number(),
        usd: z.number(),
        records: z.array(z.object({ date: z.string(), quota: z.number(), usd: z.number() })),
      })
      .nullable()
      .describe("本月的签到记录（仅 new-api 提供）"),
    manualUrl: z.string().nullable().describe("state 为 manual 时：站点上签到的页面"),
    money: moneySchema,
  })
  .meta({ id: "CheckinStatus" });
export type CheckinStatus = z.infer<typeof checkinStatusSchema>;

export const checkinResultSchema = z
  .object({
    state: z.enum(["done", "already", "manual", "disabled", "unsupported"]),
    quota: z.number().nullable().describe("本次签到的奖励（站点额度单位）；没有签到时为 null"),
    usd: z.number().nullable(),
    message: z.string().describe("给人看的结果"),
  })
  .meta({ id: "CheckinResult" });
export type CheckinResult = z.infer<typeof checkinResultSchema>;
