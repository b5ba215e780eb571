import { z } from "zod";
import { autoCheckinSchema } from "../accounts/schemas";

/** The workspace's answers: the procedures' outputs, the REST bodies and the OpenAPI document's schemas. */

export const workspaceSignedInSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      token: z.string().describe("工作区会话令牌：作为 Authorization: Bearer 发送；浏览器另收到 HttpOnly Cookie"),
      expiresAt: z.iso.datetime().describe("闲置到期时间：每次使用顺延，最长 90 天"),
      workspace: z.object({ id: z.number().int(), name: z.string() }),
    }),
  })
  .meta({ id: "WorkspaceSignedIn" });

/** The dashboard's own sign-in answers without the token (the cookie carries it). */
export const workspaceBrowserSignedInSchema = z.object({
  success: z.literal(true),
  data: z.object({ workspace: z.object({ id: z.number().int(), name: z.string() }) }),
});

export const workspaceMeSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      workspace: z.object({
        id: z.number().int(),
        name: z.string(),
        timeZone: z.string().describe("工作区的时区（IANA）：提醒、日报和工作区页面中的时间都按它显示"),
      }),
      access: z
        .enum(["device", "read", "write", "sync"])
        .describe("device：登录的设备；read / write：API 令牌；sync：同步凭据"),
      accounts: z.number().int(),
    }),
  })
  .meta({ id: "WorkspaceMe" });

export const workspaceAccountSchema = z
  .object({
    id: z.number().int(),
    siteId: z.number().int(),
    siteName: z.string().nullable().describe("站点已移除时为 null"),
    userId: z.number().describe("站点上的用户 ID"),
    username: z.string(),
    displayName: z.string(),
    alias: z.string().nullable(),
    tags: z.array(z.string()),
    pinned: z.boolean(),
    excluded: z.boolean().describe("不计入合计"),
    order: z.number().int(),
    state: z.enum(["ok", "reauth", "site_removed"]),
    stateMessage: z.string().nullable().describe("state 不是 ok 时的原因"),
    createdAt: z.iso.datetime(),
    autoCheckin: z.boolean().describe("自动签到：每天在站点的一天里分散的时刻自动签到（new-api、Veloera 站点）"),
    checkinOffered: z
      .boolean()
      .describe(
        "站点的类型有签到功能（new-api、Veloera）：只有这时能开启自动签到（站点自己是否开启签到，签到时才知道）",
      ),
    checkin: autoCheckinSchema.nullable().describe("上一次自动签到的结果；还没有时为 null"),
    sync: z
      .object({
        at: z.iso.datetime().nullable().describe("上次完成后台同步的时间"),
        running: z.boolean(),
        error: z.string().nullable().describe("上次同步失败的原因；成功后为 null"),
      })
      .optional()
      .describe("后台同步的状态（只在账户列表中）"),
  })
  .meta({ id: "WorkspaceAccount" });

export const workspaceAccountsSchema = z
  .object({ success: z.literal(true), data: z.object({ accounts: z.array(workspaceAccountSchema) }) })
  .meta({ id: "WorkspaceAccounts" });

export const workspaceAccountSuccessSchema = z
  .object({ success: z.literal(true), data: z.object({ account: workspaceAccountSchema }) })
  .meta({ id: "WorkspaceAccountAnswer" });

export const removedSchema = z.object({
  success: z.literal(true),
  data: z.object({
    ledgerDeleted: z.boolean(),
    entries: z.number().int().describe("删除的账本条目数"),
    note: z.string().nullable(),
  }),
});

export const devicesSchema = z.object({
  success: z.literal(true),
  data: z.object({
    devices: z.array(
      z.object({
        id: z.string(),
        device: z.string(),
        address: z.string().nullable(),
        createdAt: z.iso.datetime(),
        lastUsedAt: z.iso.datetime(),
        expiresAt: z.iso.datetime(),
        current: z.boolean(),
      }),
    ),
  }),
});

const apiTokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  access: z.enum(["read", "write", "sync"]),
  createdAt: z.iso.datetime(),
  lastUsedAt: z.iso.datetime(),
});

export const apiTokensSchema = z.object({
  success: z.literal(true),
  data: z.object({ tokens: z.array(apiTokenSchema) }),
});

export const apiTokenCreatedSchema = z.object({
  success: z.literal(true),
  data: z.object({
    token: z.string().describe("只显示这一次"),
    id: z.string(),
    name: z.string(),
    access: z.enum(["read", "write", "sync"]),
  }),
});

const importOutcomesSchema = z.array(
  z.object({
    siteUrl: z.string(),
    siteName: z.string(),
    userId: z.number().nullable(),
    alias: z.string().nullable(),
    result: z
      .enum(["saved", "updated", "unregistered", "refused", "skipped"])
      .describe(
        "saved 新保存；updated 已有账户换了新令牌；unregistered 站点未注册；refused 站点拒绝；skipped 无法导入",
      ),
    message: z.string().nullable(),
    accountId: z.number().int().nullable(),
  }),
);

export const importResultSchema = z
  .object({ format: z.enum(["all-api-hub", "metapi"]), outcomes: importOutcomesSchema })
  .meta({ id: "WorkspaceImportResult" });

export const restoreResultSchema = z
  .object({
    outcomes: importOutcomesSchema.describe("备份中每个账户的结果（同导入）"),
    alerts: z
      .object({ channels: z.number().int(), rules: z.number().int(), digests: z.number().int() })
      .describe("恢复的通知渠道、提醒规则和摘要数"),
  })
  .meta({ id: "WorkspaceRestoreResult" });
