import { z } from "zod";
import { flag, intParam, optionalParam } from "./params";

/** Parameters of the workspace procedures (REST bodies and query strings alike). */

const password = z.string().max(1024).describe("至少 12 个字符");

export const registerInput = z
  .object({
    name: z.string().max(200).describe("工作区名称，2 到 40 个字符，登录时使用"),
    password,
    invite: optionalParam(z.string().max(200)).describe("邀请码（管理员设为仅凭邀请码创建时必填）"),
  })
  .meta({ id: "WorkspaceRegisterRequest" });

export const workspaceLoginInput = z
  .object({
    name: z.string().max(200).describe("工作区名称，2 到 40 个字符（不区分大小写）"),
    password,
    totp: optionalParam(z.string().max(64)).describe("开启两步验证后必填：6 位验证码或一个恢复码"),
  })
  .meta({ id: "WorkspaceLoginRequest" });

export const accountIdInput = z.object({ id: intParam(1, 2_147_483_647).describe("工作区账户 id") });

const tags = z.array(z.string().max(100)).max(50);

export const addAccountInput = z
  .object({
    siteId: intParam(1, 2_147_483_647).describe("已注册站点的 id"),
    userId: z.union([z.number(), z.string().max(40)]).describe("站点上的用户 ID"),
    accessToken: z.string().min(1).max(4096).describe("站点的系统访问令牌；只以密封形式保存，从不返回"),
    alias: optionalParam(z.string().max(200)),
    tags: tags.optional(),
  })
  .meta({ id: "WorkspaceAddAccountRequest" });

export const updateAccountInput = z
  .object({
    id: intParam(1, 2_147_483_647),
    alias: z
      .union([z.string().max(200), z.null()])
      .optional()
      .describe("null 或空字符串清除别名"),
    tags: tags.optional(),
    pinned: z.boolean().optional(),
    excluded: z.boolean().optional().describe("true：不计入合计"),
    autoCheckin: z.boolean().optional().describe("true：每天自动签到"),
    order: z.number().int().min(-1_000_000).max(1_000_000).optional(),
    accessToken: z.string().min(1).max(4096).optional().describe("新的访问令牌：先经站点验证，再替换保存的令牌"),
  })
  .meta({ id: "WorkspaceUpdateAccountRequest" });

export const removeAccountInput = z.object({
  id: intParam(1, 2_147_483_647).describe("工作区账户 id"),
  ledger: flag.describe("1：同时删除该账户的账本"),
});

export const deviceInput = z.object({
  id: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "设备编号无效")
    .describe("GET /api/workspace/devices 中的 id"),
});

export const changePasswordInput = z.object({ current: password, next: password });

export const createApiTokenInput = z.object({
  name: z.string().max(200),
  access: z
    .enum(["read", "write", "sync"])
    .describe("read：只读；write：读写；sync：只用于 All API Hub 的 WebDAV 同步"),
  password: z
    .string()
    .max(1024)
    .optional()
    .describe("工作区密码：access 为 sync 时必填（同步文件含全部账户的访问令牌）"),
});

export const totpEnableInput = z.object({
  secret: z.string().max(128).describe("beginTotp 给出的密钥"),
  code: z.string().max(16).describe("验证器显示的 6 位验证码"),
  password: z.string().max(1024).describe("当前密码"),
});

export const totpDisableInput = z.object({
  code: z.string().max(64).describe("6 位验证码或一个恢复码"),
  password: z.string().max(1024),
});

export const siteAddressInput = z.object({
  url: z.string().max(500).describe("站点地址，如 https://api.example.com（只接受公网地址，除非运营方允许内网地址）"),
});

export const workspaceSiteIdInput = z.object({ id: intParam(1, 2_147_483_647).describe("站点 id") });
