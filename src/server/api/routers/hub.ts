/**
 * The All API Hub sync (docs/design.md 26): its settings and results for the workspace (merged
 * into the workspace router), and the operations of its WebDAV folder (`dav`, called by the
 * WebDAV adapter, http/dav.ts, with the workspace's sync credential).
 */
import { z } from "zod";
import { endAccountAlerts } from "../../alerts/history";
import { doneSchema } from "../../core/messages";
import { logEvent } from "../../core/log";
import { hubSyncInput, hubSyncSchema } from "../../hub/schemas";
import { hubStore } from "../../hub/store";
import { hubSync } from "../../hub/sync";
import type { Context } from "../context";
import { rest } from "../rest-routes";
import { paced } from "../workspace-access";
import { router, savedAccountsOf, syncProcedure, workspaceProcedure } from "../trpc";

/** The sync of a request's workspace: verification as a sign-in, alerts ended with an account removed. */
const syncOf = (ctx: Context) =>
  hubSync(ctx.db, {
    accounts: savedAccountsOf(ctx),
    probe: { timeoutMs: ctx.timeoutMs, perMinute: ctx.siteRequestsPerMinute },
    removed: (workspaceId, accountId) => endAccountAlerts(ctx.db, workspaceId, accountId),
  });

/** The WebDAV folder's address, as the extension is given it. */
const DAV_PATH = "/dav/";

/**
 * Uploads into a workspace's folder a minute (the extension's sync is a PUT and a MOVE; an
 * encrypted file costs a key derivation), per workspace, and four times that per address.
 */
const DAV_WRITES_PER_MINUTE = 30;
const DAV_PACE = "同步写入过于频繁，请稍后再试";

export const hubSettingsRouter = router({
  hubSync: workspaceProcedure
    .meta(
      rest("GET", "/api/workspace/hub-sync", {
        summary: "All API Hub 同步的设置和最近结果",
        description:
          "扩展的 WebDAV 地址、删除的处理方式、是否保存了加密密码、扩展上次读写的时间，以及最近的写入中每个账户的结果。",
        auth: "workspace",
      }),
    )
    .output(hubSyncSchema)
    .query(async ({ ctx }) => {
      const store = hubStore(ctx.db);
      const id = ctx.workspace.workspaceId;
      const [settings, runs, unsynced] = await Promise.all([
        store.settings(id),
        store.runs(id, 10),
        store.unsynced(id),
      ]);
      return {
        success: true as const,
        data: {
          address: `${ctx.origin}${DAV_PATH}`,
          deletes: settings.deletes,
          hasPassphrase: settings.hasPassphrase,
          encrypted: settings.encrypted,
          fileAt: settings.fileAt?.toISOString() ?? null,
          readAt: settings.readAt?.toISOString() ?? null,
          unsynced,
          runs: runs.map((r) => ({ at: r.at.toISOString(), message: r.message, items: r.items })),
        },
      };
    }),

  updateHubSync: workspaceProcedure
    .meta(
      rest("PUT", "/api/workspace/hub-sync", {
        summary: "修改 All API Hub 同步的设置",
        description:
          "deletes：扩展中删除的账户在此删除（remove）或保留（keep）；passphrase：扩展「备份加密」的密码（加密保存），null 删除它。",
        auth: "workspace",
      }),
    )
    .input(hubSyncInput)
    .output(doneSchema)
    .mutation(async ({ ctx, input }) => {
      await hubStore(ctx.db).setSettings(ctx.workspace.workspaceId, input);
      return { success: true as const };
    }),
});

const name = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^/\\\0]+$/);
const bytes = z.custom<Buffer>((v) => Buffer.isBuffer(v), "文件内容无效");
const outcome = z.union([
  z.object({
    ok: z.literal(true),
    created: z.boolean(),
    items: z.array(z.object({ result: z.string(), name: z.string(), message: z.string().nullable() })),
  }),
  z.object({ ok: z.literal(false), message: z.string(), busy: z.boolean() }),
]);

/** The WebDAV folder's operations: the extension's file (merged on write) and the copies beside it. */
export const davRouter = router({
  /** The file as the extension reads it: the workspace's accounts in the extension's last file. */
  file: syncProcedure.output(z.object({ text: z.string().nullable() })).query(async ({ ctx }) => ({
    text: await syncOf(ctx).read(ctx.workspace.workspaceId),
  })),

  /** A write of the file (PUT, or MOVE of a copy onto it): merged into the workspace. */
  write: syncProcedure
    .input(z.union([z.object({ body: bytes }), z.object({ from: name })]))
    .output(outcome)
    .mutation(async ({ ctx, input }) => {
      const id = ctx.workspace.workspaceId;
      await paced(ctx, "dav-write", DAV_WRITES_PER_MINUTE, DAV_PACE);
      const store = hubStore(ctx.db);
      const body = "body" in input ? input.body : await store.temp(id, input.from);
      if (body === null) return { ok: false as const, message: "源文件不存在", busy: false };
      const existed = (await store.settings(id)).fileAt !== null;
      const result = await syncOf(ctx).write(id, body.toString("utf8"));
      if (!result.ok) {
        logEvent("hub.write_refused", { workspace: id, message: result.message });
        return { ok: false as const, message: result.message, busy: result.busy === true };
      }
      if ("from" in input) await store.removeTemp(id, input.from);
      const count = (what: string) => result.items.filter((i) => i.result === what).length;
      logEvent("hub.write", {
        workspace: id,
        added: count("added"),
        changed: count("changed"),
        removed: count("removed"),
      });
      return { ok: true as const, created: !existed, items: result.items };
    }),

  /** The extension's file set aside (DELETE): the next read starts again from the workspace's accounts. */
  clear: syncProcedure.output(doneSchema).mutation(async ({ ctx }) => {
    await hubStore(ctx.db).setFile(ctx.workspace.workspaceId, null, new Date());
    return { success: true as const };
  }),

  /** What the folder holds: whether the extension's file is there, and the copies beside it. */
  listing: syncProcedure
    .output(
      z.object({
        fileAt: z.date().nullable(),
        files: z.array(z.object({ name: z.string(), size: z.number(), createdAt: z.date() })),
      }),
    )
    .query(async ({ ctx }) => {
      const store = hubStore(ctx.db);
      const [settings, files] = await Promise.all([
        store.settings(ctx.workspace.workspaceId),
        store.temps(ctx.workspace.workspaceId),
      ]);
      return { fileAt: settings.fileAt, files };
    }),

  temp: syncProcedure
    .input(z.object({ name }))
    .output(z.object({ body: bytes.nullable() }))
    .query(async ({ ctx, input }) => ({ body: await hubStore(ctx.db).temp(ctx.workspace.workspaceId, input.name) })),

  putTemp: syncProcedure
    .input(z.object({ name, body: bytes }))
    .output(z.object({ stored: z.boolean(), created: z.boolean() }))
    .mutation(async ({ ctx, input }) => {
      await paced(ctx, "dav-write", DAV_WRITES_PER_MINUTE, DAV_PACE);
      const put = await hubStore(ctx.db).putTemp(ctx.workspace.workspaceId, input.name, input.body, new Date());
      return put ? { stored: true, created: put.created } : { stored: false, created: false };
    }),

  removeTemp: syncProcedure
    .input(z.object({ name }))
    .output(z.object({ removed: z.boolean() }))
    .mutation(async ({ ctx, input }) => ({
      removed: await hubStore(ctx.db).removeTemp(ctx.workspace.workspaceId, input.name),
    })),
});
