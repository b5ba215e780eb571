import { z } from "zod";
import {
  actionRecordsSchema,
  checkinResultSchema,
  checkinStatusSchema,
  redeemResultSchema,
  revealedKeySchema,
  tokenDeleteSchema,
  tokenRulesSchema,
  tokenWriteSchema,
} from "../../actions/schemas";
import { successOf } from "../../core/messages";
import { intParam, pageParam, pageSizeParam } from "./params";

// Writes on an account's site (docs/design.md 20): inputs, and answers in the success envelope.

export const redeemInput = z.object({
  code: z.string().max(256).meta({ description: "兑换码（前后的空白会被去掉）" }),
});

export const recordsInput = z.object({ page: pageParam, pageSize: pageSizeParam }).prefault({});

const success = <T extends z.ZodType>(data: T, id: string) => successOf(data).meta({ id });

export const redeemSuccess = success(redeemResultSchema, "RedeemSuccess");
export const checkinStatusSuccess = success(checkinStatusSchema, "CheckinStatusSuccess");
export const checkinResultSuccess = success(checkinResultSchema, "CheckinResultSuccess");
export const actionRecordsSuccess = success(actionRecordsSchema, "ActionRecordsSuccess");

export const checkinAllSuccess = success(
  z
    .object({
      results: z.array(
        z.object({
          name: z.string().describe("站点 · 账户"),
          state: z.enum(["done", "already", "manual", "disabled", "unsupported", "failed"]),
          message: z.string(),
        }),
      ),
    })
    .meta({ id: "CheckinAll" }),
  "CheckinAllSuccess",
);

// Tokens: the same fields for every family (gateway/token-writes.ts maps them to each one's own).

const tokenId = intParam(1, 2_147_483_647).meta({ description: "令牌编号（站点的 id）" });

const draftFields = {
  name: z.string().max(200).meta({ description: "名称（站点按字节计：新版 new-api 50，其他 30；一个汉字 3 字节）" }),
  unlimited: z.boolean().meta({ description: "无限额度" }),
  remainQuota: z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .meta({ description: "额度（站点额度单位）；无限额度时不用" }),
  expiresAt: z.iso.datetime({ offset: true }).nullable().meta({ description: "过期时间（ISO 8601）；null 为永不过期" }),
  models: z.array(z.string().max(200)).max(200).meta({ description: "限用的模型；空数组为不限" }),
  allowIps: z.array(z.string().max(64)).max(100).meta({ description: "IP 白名单（地址或网段）；空数组为不限" }),
  group: z.string().max(64).meta({ description: "分组；空为账户自己的分组（one-api 没有）" }),
};

export const tokenCreateInput = z.object({
  name: draftFields.name,
  unlimited: draftFields.unlimited.default(true),
  remainQuota: draftFields.remainQuota.default(0),
  expiresAt: draftFields.expiresAt.default(null),
  models: draftFields.models.default([]),
  allowIps: draftFields.allowIps.default([]),
  group: draftFields.group.default(""),
});

export const tokenUpdateInput = z.object({
  id: tokenId,
  name: draftFields.name.optional(),
  unlimited: draftFields.unlimited.optional(),
  remainQuota: draftFields.remainQuota.optional(),
  expiresAt: draftFields.expiresAt.optional(),
  models: draftFields.models.optional(),
  allowIps: draftFields.allowIps.optional(),
  group: draftFields.group.optional(),
});

export const tokenStatusInput = z.object({
  id: tokenId,
  enabled: z.boolean().meta({ description: "true 启用，false 禁用" }),
});
export const tokenIdInput = z.object({ id: tokenId });
export const tokenDeleteInput = z.object({
  ids: z.array(intParam(1, 2_147_483_647)).min(1).max(100).meta({ description: "要删除的令牌编号，至多 100 个" }),
});

export const tokenRulesSuccess = success(tokenRulesSchema, "TokenRulesSuccess");
export const tokenOptionsSuccess = success(
  z.object({
    groups: z
      .array(z.object({ name: z.string(), ratio: z.number() }))
      .nullable()
      .describe("令牌可选的分组及其倍率（从便宜到贵）；站点不公开时为 null"),
    group: z.string().nullable().describe("账户自己的分组"),
    models: z.array(z.string()).nullable().describe("账户可用的模型；站点不公开时为 null"),
    readAt: z.string().nullable().describe("读取这些的时间（每小时至多读一次）"),
  }),
  "TokenOptionsSuccess",
);
export const tokenWriteSuccess = success(tokenWriteSchema, "TokenWriteSuccess");
export const tokenDeleteSuccess = success(tokenDeleteSchema, "TokenDeleteSuccess");
export const revealedKeySuccess = success(revealedKeySchema, "RevealedKeySuccess");

const accountKey = z
  .string()
  .regex(/^\d{1,10}:\d{1,15}$/, "账户无效")
  .describe("账户：站点 id:站点用户 id");

export const keyExportInput = z.object({
  keys: z
    .union([
      z.literal("all"),
      z
        .array(z.object({ account: accountKey, ids: z.array(z.number().int().positive()).max(100) }))
        .min(1, "请至少选择一个令牌")
        .max(200),
    ])
    .describe("all：每个账户的全部启用的令牌；或按账户列出令牌 id"),
});

export const accountTokensSuccess = success(
  z.object({
    accounts: z.array(
      z.object({
        account: accountKey,
        name: z.string(),
        siteName: z.string(),
        tokens: z.array(z.object({ id: z.number(), name: z.string(), status: z.string(), key: z.string() })).nullable(),
        message: z.string().nullable().describe("读不到令牌时的原因"),
      }),
    ),
  }),
  "AccountTokensSuccess",
);

export const keyExportSuccess = success(
  z.object({
    keys: z.array(
      z.object({
        account: z.string(),
        accountName: z.string(),
        tokenId: z.number(),
        tokenName: z.string(),
        baseUrl: z.string(),
        key: z.string().describe("完整密钥；本服务不保存它"),
        ccSwitch: z.object({ claude: z.string(), codex: z.string() }),
        cherryStudio: z.string(),
      }),
    ),
    failed: z.array(
      z.object({ account: z.string(), accountName: z.string(), tokenId: z.number().nullable(), message: z.string() }),
    ),
    env: z.string().describe(".env：每个密钥一组 KEY_n_BASE_URL / KEY_n_API_KEY，第一个也写成 OPENAI_*"),
    json: z.string().describe("JSON 列表：account、token、baseUrl、apiKey"),
  }),
  "KeyExportSuccess",
);
