/**
 * A whole workspace in an encrypted file, and back (docs/design.md 26). Merged into the workspace
 * router (api/root.ts).
 */
import { z } from "zod";
import { logEvent } from "../../core/log";
import { successOf } from "../../core/messages";
import { restoreBackup, workspaceBackup } from "../../backup/workspace-backup";
import { IMPORT_MAX_BYTES } from "../../net/body";
import { restoreResultSchema } from "../../workspace/schemas";
import { workspaceStore } from "../../workspace/workspaces";
import { fileSuccess, type FileData } from "../schemas/accounts";
import { rest } from "../rest-routes";
import { router, savedAccountsOf, workspaceProcedure } from "../trpc";
import { deviceOnly, guessing, paced } from "../workspace-access";

/** Restores a workspace may start a minute (each opens a file: a key derivation and a sign-in per account). */
const RESTORES_PER_MINUTE = 5;

const passphrase = z.string().max(200).describe("备份密码：至少 8 个字符，恢复时需要；本服务不保存它");

export const workspaceBackupRouter = router({
  /**
   * The workspace with every access token, encrypted with the passphrase given (a download). Only
   * a signed-in device, with the workspace's password.
   */
  backup: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/backup", {
        answer: "file",
        summary: "下载整个工作区的加密备份",
        description:
          "全部账户（含访问令牌）、别名、标签、置顶、排序、自动签到，以及提醒的时区、渠道、规则和摘要，用备份密码加密" +
          "（All API Hub 的加密格式：PBKDF2-SHA256 与 AES-256-GCM）。需要工作区密码，错 5 次本设备退出登录；只能在登录的设备上进行。",
        auth: "workspace",
      }),
    )
    .input(z.object({ password: z.string().max(200).describe("工作区密码"), passphrase }))
    .output(fileSuccess)
    .mutation(async ({ ctx, input }) => {
      deviceOnly(ctx.workspace.kind);
      const id = ctx.workspace.workspaceId;
      await guessing(ctx, () => workspaceStore(ctx.db).confirmPassword(id, input.password));
      const made = await workspaceBackup(
        ctx.db,
        savedAccountsOf(ctx),
        { id, name: ctx.workspace.workspaceName },
        input.passphrase,
      );
      logEvent("workspace.backup", { workspace: id, accounts: made.accounts });
      const data: FileData = {
        filename: made.filename,
        contentType: "application/json; charset=utf-8",
        body: new TextEncoder().encode(made.text),
      };
      return { success: true as const, data };
    }),

  /** Restores a backup into this workspace while it has no account: each account verified with its site. */
  restore: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/restore", {
        maxBody: IMPORT_MAX_BYTES,
        summary: "从加密备份恢复到本工作区",
        description:
          "只能恢复到还没有账户的工作区。每个账户先经站点验证再保存（本服务没有的站点先探测再作为本工作区的站点添加），" +
          "并恢复别名、标签等设置与提醒。",
        auth: "workspace",
      }),
    )
    .input(z.object({ file: z.string().max(IMPORT_MAX_BYTES).describe("备份文件的内容"), passphrase }))
    .output(successOf(restoreResultSchema))
    .mutation(async ({ ctx, input }) => {
      const id = ctx.workspace.workspaceId;
      await paced(ctx, "restore", RESTORES_PER_MINUTE, "恢复备份过于频繁，请稍后再试");
      const result = await restoreBackup(
        ctx.db,
        {
          accounts: savedAccountsOf(ctx),
          probe: { timeoutMs: ctx.timeoutMs, perMinute: ctx.siteRequestsPerMinute },
          origin: ctx.origin,
        },
        id,
        input.file,
        input.passphrase,
      );
      logEvent("workspace.restore", { workspace: id, accounts: result.outcomes.length });
      return { success: true as const, data: result };
    }),
});
