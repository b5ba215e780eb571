/**
 * A workspace's own safety (docs/design.md 17): the devices signed in to it, its password, its
 * second factor and its API tokens. Merged into the workspace router (api/root.ts); each
 * endpoint's declaration carries its documentation.
 */
import { z } from "zod";
import { Refusal } from "../../core/errors";
import { doneSchema, successOf } from "../../core/messages";
import { workspaceCookie } from "../../workspace/cookie";
import { apiTokenCreatedSchema, apiTokensSchema, devicesSchema } from "../../workspace/schemas";
import { totp } from "../../workspace/totp";
import { WS_MSG, workspaceStore } from "../../workspace/workspaces";
import {
  changePasswordInput,
  createApiTokenInput,
  deviceInput,
  totpDisableInput,
  totpEnableInput,
} from "../schemas/workspace";
import { router, workspaceProcedure, sentOnce } from "../trpc";
import { deviceOnly, guessing } from "../workspace-access";
import { rest } from "../rest-routes";

/** What only a person signed in on a device may do (not a program with an API token). */
export const workspaceSecurityRouter = router({
  /** The devices signed in to the workspace, the most recently used first. */
  devices: workspaceProcedure
    .meta(
      rest("GET", "/api/workspace/devices", {
        summary: "已登录的设备",
        description: "每台设备的浏览器与系统、地址、登录、最近使用与到期时间；current 为发出请求的这台。",
        auth: "workspace",
      }),
    )
    .output(devicesSchema)
    .query(async ({ ctx }) => {
      const rows = await workspaceStore(ctx.db).devices(ctx.workspace.workspaceId);
      return {
        success: true as const,
        data: {
          devices: rows.map((r) => ({
            id: r.id,
            device: r.device,
            address: r.address,
            createdAt: r.createdAt.toISOString(),
            lastUsedAt: r.lastUsedAt.toISOString(),
            expiresAt: (r.expiresAt ?? r.lastUsedAt).toISOString(),
            current: r.id === ctx.workspace.id,
          })),
        },
      };
    }),

  revokeDevice: workspaceProcedure
    .meta(
      rest("DELETE", "/api/workspace/devices/{id}", {
        summary: "让一台设备退出",
        description: "没有这台设备（或它已退出）时为 HTTP 404「该设备不存在或已退出」。",
        auth: "workspace",
      }),
    )
    .input(deviceInput)
    .output(doneSchema)
    .mutation(async ({ ctx, input }) => {
      if (!(await workspaceStore(ctx.db).endDevice(ctx.workspace.workspaceId, input.id))) {
        throw new Refusal(WS_MSG.sessionNotFound, "NOT_FOUND");
      }
      return { success: true as const };
    }),

  /** Signs out every device, this one included, and revokes every API token (recovery). */
  signOutEverywhere: workspaceProcedure
    .meta(
      rest("DELETE", "/api/workspace/devices", {
        summary: "在所有设备上退出",
        description: "结束工作区的所有设备会话（包括本设备），并撤销全部 API 令牌；ended 为结束的会话数。",
        auth: "workspace",
      }),
    )
    .output(doneSchema.extend({ ended: z.number().int() }))
    .mutation(async ({ ctx }) => {
      const ended = await workspaceStore(ctx.db).endAllExcept(ctx.workspace.workspaceId, null);
      if (ctx.workspaceVia === "cookie") workspaceCookie.clear(ctx.resHeaders, ctx.secure);
      return { success: true as const, ended };
    }),

  /** Changes the password; the other devices are signed out and the API tokens revoked. */
  changePassword: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/password", {
        summary: "修改密码",
        description:
          "需要当前密码；其他设备随即退出，全部 API 令牌撤销。当前密码错 5 次，本设备退出登录。只能在登录的设备上进行。",
        auth: "workspace",
      }),
    )
    .input(changePasswordInput)
    .output(doneSchema.extend({ ended: z.number().int() }))
    .mutation(async ({ ctx, input }) => {
      deviceOnly(ctx.workspace.kind);
      const store = workspaceStore(ctx.db);
      const ended = await guessing(ctx, () => store.changePassword(ctx.workspace, input.current, input.next));
      return { success: true as const, ended };
    }),

  /** Whether the second factor is on, and how many recovery codes are left. */
  totpStatus: workspaceProcedure
    .meta(
      rest("GET", "/api/workspace/totp", {
        summary: "两步验证状态",
        description: "是否已开启，以及剩余的恢复码数。",
        auth: "workspace",
      }),
    )
    .output(successOf(z.object({ enabled: z.boolean(), recoveryLeft: z.number().int() })))
    .query(async ({ ctx }) => {
      const factor = totp(ctx.db);
      const enabled = await factor.enabled(ctx.workspace.workspaceId);
      const recoveryLeft = enabled ? await factor.recoveryLeft(ctx.workspace.workspaceId) : 0;
      return { success: true as const, data: { enabled, recoveryLeft } };
    }),

  /** A new secret for an authenticator app (its address and QR code); nothing changes until enableTotp. */
  beginTotp: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/totp/setup", {
        input: "none",
        summary: "开始设置两步验证",
        description:
          "生成新的 TOTP 密钥（secret、otpauth 地址 uri 与其二维码 qrSvg）；在 enable 之前不会生效。只能在登录的设备上进行。",
        auth: "workspace",
      }),
    )
    .output(successOf(z.object({ secret: z.string(), uri: z.string(), qrSvg: z.string() })))
    .mutation(async ({ ctx }) => {
      deviceOnly(ctx.workspace.kind);
      return { success: true as const, data: await totp(ctx.db).begin(ctx.workspace.workspaceId) };
    }),

  /** Turns the second factor on with a code the authenticator shows; the recovery codes are shown this once. */
  enableTotp: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/totp/enable", {
        summary: "开启两步验证",
        description:
          "以验证器显示的验证码与当前密码确认；成功时 recoveryCodes 为 10 个恢复码，只显示这一次。此后登录需要 totp 字段。",
        auth: "workspace",
      }),
    )
    .input(totpEnableInput)
    .output(successOf(z.object({ recoveryCodes: z.array(z.string()) })))
    .mutation(async ({ ctx, input }) => {
      deviceOnly(ctx.workspace.kind);
      const recoveryCodes = await guessing(ctx, () => totp(ctx.db).enable(ctx.workspace.workspaceId, input));
      return { success: true as const, data: { recoveryCodes } };
    }),

  disableTotp: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/totp/disable", {
        summary: "关闭两步验证",
        description: "需要当前密码与一个验证码（或恢复码）。",
        auth: "workspace",
      }),
    )
    .input(totpDisableInput)
    .output(doneSchema)
    .mutation(async ({ ctx, input }) => {
      deviceOnly(ctx.workspace.kind);
      await guessing(ctx, () => totp(ctx.db).disable(ctx.workspace.workspaceId, input));
      return { success: true as const };
    }),

  apiTokens: workspaceProcedure
    .meta(
      rest("GET", "/api/workspace/tokens", {
        summary: "API 令牌",
        description: "供其他程序使用的令牌：名称、只读或读写、创建与最近使用时间；令牌本身不再显示。",
        auth: "workspace",
      }),
    )
    .output(apiTokensSchema)
    .query(async ({ ctx }) => {
      const tokens = await workspaceStore(ctx.db).apiTokens(ctx.workspace.workspaceId);
      return {
        success: true as const,
        data: {
          tokens: tokens.map((t) => ({
            ...t,
            createdAt: t.createdAt.toISOString(),
            lastUsedAt: t.lastUsedAt.toISOString(),
          })),
        },
      };
    }),

  /** A new API token for another program, shown once. Only a signed-in device makes one. */
  createApiToken: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/tokens", {
        summary: "创建 API 令牌",
        description:
          "令牌只在这次答复中出现一次；作为 Bearer 使用，可读取工作区的全部账户（只读令牌不能做任何修改）。" +
          "access 为 sync 时是 All API Hub 的同步凭据：只能作为 /dav/ 的 WebDAV 密码使用；同步文件含全部账户的访问令牌，" +
          "所以要输入工作区密码（password），错 5 次本设备退出登录。只能在登录的设备上进行。",
        auth: "workspace",
      }),
    )
    .use(sentOnce)
    .input(createApiTokenInput)
    .output(apiTokenCreatedSchema)
    .mutation(async ({ ctx, input }) => {
      deviceOnly(ctx.workspace.kind);
      const store = workspaceStore(ctx.db);
      // The sync file holds every saved token in a form its reader opens: asked as the backup is.
      if (input.access === "sync") {
        const password = input.password;
        if (!password) throw new Refusal(WS_MSG.syncNeedsPassword, "BAD_REQUEST");
        await guessing(ctx, () => store.confirmPassword(ctx.workspace.workspaceId, password));
      }
      const created = await store.createApiToken(ctx.workspace.workspaceId, input.name, input.access);
      return {
        success: true as const,
        data: { token: created.token, id: created.id, name: created.name, access: created.access },
      };
    }),

  revokeApiToken: workspaceProcedure
    .meta(
      rest("DELETE", "/api/workspace/tokens/{id}", {
        summary: "撤销 API 令牌",
        description: "没有这个令牌（或它已撤销）时为 HTTP 404「该 API 令牌不存在或已撤销」。",
        auth: "workspace",
      }),
    )
    .input(deviceInput)
    .output(doneSchema)
    .mutation(async ({ ctx, input }) => {
      if (!(await workspaceStore(ctx.db).revokeApiToken(ctx.workspace.workspaceId, input.id))) {
        throw new Refusal(WS_MSG.tokenNotFound, "NOT_FOUND");
      }
      return { success: true as const };
    }),
});
