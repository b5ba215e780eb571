/**
 * A workspace's own sites (docs/design.md 25): probed, then added for this workspace only; one
 * address is one site whoever adds it. Merged into the workspace router (api/root.ts).
 */
import { doneSchema, orFailure } from "../../core/messages";
import { env } from "../../core/env";
import { paced } from "../workspace-access";
import { siteRegistry } from "../../sites/registry";
import { siteAddedSchema, siteFindingSchema, workspaceSitesSchema } from "../../sites/schemas";
import { workspaceSites } from "../../sites/workspace-sites";
import { siteAddressInput, workspaceSiteIdInput } from "../schemas/workspace";
import { router, savedAccountsOf, sentOnce, workspaceProcedure } from "../trpc";
import { rest } from "../rest-routes";
import type { Context } from "../context";

const probeOptions = (ctx: Context) => ({ timeoutMs: ctx.timeoutMs, perMinute: ctx.siteRequestsPerMinute });

/** Probes of addresses a workspace may send a minute (probe and add alike): its own floods stay its own. */
const PROBES_PER_MINUTE = 30;

const probeTurn = (ctx: Parameters<typeof paced>[0]) =>
  paced(ctx, "site-probe", PROBES_PER_MINUTE, "探测站点过于频繁，请稍后再试");

export const workspaceSitesRouter = router({
  sites: workspaceProcedure
    .meta(
      rest("GET", "/api/workspace/sites", {
        summary: "工作区可用的站点",
        description: "本服务登记的站点（所有人可用）和本工作区自行添加的站点（只有本工作区可见），添加账户时从中选择。",
        auth: "workspace",
      }),
    )
    .output(workspaceSitesSchema)
    .query(async ({ ctx }) => {
      const [own, registered] = await Promise.all([
        workspaceSites(ctx.db).list(ctx.workspace.workspaceId),
        siteRegistry(ctx.db).list(),
      ]);
      return { success: true as const, data: { own, registered, limit: env().WORKSPACE_SITES } };
    }),

  probeSite: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/sites/probe", {
        summary: "探测站点地址",
        description:
          "读取该地址的 /api/status（不带令牌、不跟随重定向、有时限和大小上限），答复识别出的网关类型、版本和金额设置，不保存任何东西。" +
          "内网、本机和保留地址被拒绝，除非运营方设置 WORKSPACE_SITES_ALLOW_PRIVATE=1。",
        auth: "workspace",
      }),
    )
    .input(siteAddressInput)
    .output(orFailure(siteFindingSchema))
    .mutation(async ({ ctx, input }) => {
      await probeTurn(ctx);
      const found = await workspaceSites(ctx.db).probe(input.url, probeOptions(ctx));
      return {
        success: true as const,
        data: {
          url: found.url,
          name: found.name,
          ms: found.ms,
          family: found.profile.family,
          version: found.profile.version,
          money: found.profile.money,
        },
      };
    }),

  addSite: workspaceProcedure
    .meta(
      rest("POST", "/api/workspace/sites", {
        summary: "添加自己的站点",
        description:
          "再次探测后把站点加入本工作区（只有本工作区可见）；其他工作区已添加的同一地址是同一个站点，共用它的请求额度。" +
          "已登记的站点、被运营方禁止的地址和超出数量上限时拒绝。",
        auth: "workspace",
      }),
    )
    .use(sentOnce)
    .input(siteAddressInput)
    .output(orFailure(siteAddedSchema))
    .mutation(async ({ ctx, input }) => {
      await probeTurn(ctx);
      const site = await workspaceSites(ctx.db).add(ctx.workspace.workspaceId, input.url, probeOptions(ctx));
      return { success: true as const, data: { site } };
    }),

  removeSite: workspaceProcedure
    .meta(
      rest("DELETE", "/api/workspace/sites/{id}", {
        summary: "移除自己的站点",
        description: "本工作区还有账户在这个站点上时拒绝；最后一个使用它的工作区移除后，站点一并删除。",
        auth: "workspace",
      }),
    )
    .input(workspaceSiteIdInput)
    .output(orFailure(doneSchema))
    .mutation(async ({ ctx, input }) => {
      const saved = await savedAccountsOf(ctx).list(ctx.workspace.workspaceId);
      const onSite = saved.filter((a) => a.siteId === input.id).length;
      await workspaceSites(ctx.db).remove(ctx.workspace.workspaceId, input.id, onSite);
      return { success: true as const };
    }),
});
