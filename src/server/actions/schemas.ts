import { z } from "zod";
import { moneySchema } from "../gateway/families";

/** What the writes answer: the procedures' outputs and the OpenAPI document's source. */

const iso = z.iso.datetime();

const actionRecordSchema = z
  .object({
    at: iso,
    kind: z
      .enum(["redeem", "checkin", "token", "proxy"])
      .describe(
        "redeem 兑换码；checkin 签到；token 令牌的创建、修改、启用、禁用、删除与查看密钥；proxy 经 /api/site 代理的写请求",
      ),
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

const CHECKIN_STATES = ["available", "done", "manual", "disabled", "unsupported"] as const;

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

export const tokenRulesSchema = z
  .object({
    nameBytes: z.number().int().describe("令牌名称最多的字节数（UTF-8，一个汉字 3 字节）"),
    maxQuota: z.number().nullable().describe("有限额度的上限（站点额度单位）；站点不检查时为 null"),
    groups: z.boolean().describe("令牌能否指定分组"),
    batchDelete: z.boolean().describe("站点能否一次删除多个令牌（否则逐个删除）"),
    hardDelete: z.boolean().describe("删除是否不可恢复（one-api）"),
    revealRoute: z.boolean().describe("查看完整密钥是否计入站点每 20 分钟 20 次的限制（新版 new-api）"),
    cidrOnly: z.boolean().describe("IP 白名单是否只收网段（one-api；单个地址按 /32 发送）"),
    money: moneySchema,
    critical: z
      .object({
        limit: z.number().int(),
        left: z.number().int().describe("本服务在这个站点还能兑换或查看密钥的次数"),
        nextAt: iso.nullable().describe("下一次额度恢复的时间"),
      })
      .nullable()
      .describe("站点的兑换与查看密钥限制；不适用时为 null"),
  })
  .meta({ id: "TokenRules" });
export type TokenRulesAnswer = z.infer<typeof tokenRulesSchema>;

const clientConfigsSchema = z
  .object({
    env: z.string().describe(".env 片段：OPENAI_BASE_URL 与 OPENAI_API_KEY"),
    cherryStudio: z.object({
      link: z.string().describe("Cherry Studio 的一键导入链接"),
      json: z.string().describe("同样的配置，供手动填写"),
    }),
    ccSwitch: z.object({
      claude: z.string().describe("CC Switch 导入为 Claude Code 供应商的链接"),
      codex: z.string().describe("CC Switch 导入为 Codex 供应商的链接"),
    }),
  })
  .meta({ id: "ClientConfigs" });
export type ClientConfigs = z.infer<typeof clientConfigsSchema>;

export const revealedKeySchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    key: z.string().describe("完整密钥（带 sk- 前缀）。本服务不保存、不缓存、不记录它；回答带 Cache-Control: no-store"),
    baseUrl: z.string().describe("站点地址"),
    exports: clientConfigsSchema,
  })
  .meta({ id: "RevealedKey" });
export type RevealedKey = z.infer<typeof revealedKeySchema>;

export const tokenWriteSchema = z
  .object({
    id: z.number().int().nullable().describe("令牌编号（创建时：站点没有告知时为 null）"),
    message: z.string(),
  })
  .meta({ id: "TokenWrite" });

export const tokenDeleteSchema = z
  .object({
    deleted: z.number().int().describe("删除了几个"),
    failed: z.array(z.object({ id: z.number().int(), message: z.string() })).describe("没能删除的令牌及站点的原因"),
    permanent: z.boolean().describe("站点是否永久删除（one-api）"),
  })
  .meta({ id: "TokenDelete" });
