/**
 * The sites workspaces added themselves, as the operator sees them (docs/design.md 25): each with
 * its family and how many workspaces use it, and the addresses blocked. Merged into the admin
 * router (api/root.ts); each endpoint's declaration carries its documentation.
 */
import { z } from "zod";
import { audit } from "../../admin/operator";
import { orFailure, successOf } from "../../core/messages";
import { FAMILIES, type Family } from "../../gateway/families";
import { blockAddress, blockedAddresses, listWorkspaceSites, unblockAddress } from "../../sites/workspace-sites";
import { normalizeSiteUrl } from "../../sites/registry";
import { siteAddressInput } from "../schemas/workspace";
import { operatorProcedure, router } from "../trpc";
import { rest } from "../rest-routes";

/** A stored family name, or null when the site was never probed (or names none we know). */
const familyOf = (family: string | null): Family | null =>
  (FAMILIES as readonly string[]).includes(family ?? "") ? (family as Family) : null;

const actorOf = (ctx: { clientAddress: string | null }) => ctx.clientAddress ?? "unknown";

const workspaceSitesAdminSchema = z
  .object({
    sites: z.array(
      z.object({
        id: z.number().int(),
        name: z.string(),
        url: z.string(),
        family: z.enum(FAMILIES).nullable().describe("最近一次探测识别出的网关类型"),
        version: z.string().nullable(),
        workspaces: z.number().int().describe("使用它的工作区数"),
      }),
    ),
    blocked: z.array(z.object({ url: z.string(), at: z.string() })).describe("已禁止添加的地址"),
  })
  .meta({ id: "WorkspaceSitesAdmin" });

export const adminSitesRouter = router({
  workspaceSites: operatorProcedure
    .meta(
      rest("GET", "/api/admin/workspace-sites", {
        summary: "工作区自行添加的站点",
        description: "每个站点的地址、网关类型和使用它的工作区数，以及已禁止添加的地址。",
        auth: "admin",
      }),
    )
    .output(successOf(workspaceSitesAdminSchema))
    .query(async ({ ctx }) => {
      const [sites, blocked] = await Promise.all([listWorkspaceSites(ctx.db), blockedAddresses(ctx.db)]);
      return {
        success: true as const,
        data: {
          sites: sites.map((s) => ({ ...s, family: familyOf(s.family) })),
          blocked,
        },
      };
    }),

  blockSite: operatorProcedure
    .meta(
      rest("POST", "/api/admin/workspace-sites/block", {
        summary: "禁止一个站点地址",
        description:
          "之后没有工作区能添加这个地址；已添加的站点从所有工作区移除（它们的账户显示「站点已移除」，历史保留）。登记的站点请在站点列表中移除。",
        auth: "admin",
      }),
    )
    .input(siteAddressInput)
    .output(orFailure(successOf(z.object({ removed: z.number().int().describe("移除的站点数（0 或 1）") }))))
    .mutation(async ({ ctx, input }) => {
      const outcome = await blockAddress(ctx.db, input.url);
      await audit(ctx.db, { action: "siteBlock", actor: actorOf(ctx), after: { url: normalizeSiteUrl(input.url) } });
      return { success: true as const, data: outcome };
    }),

  unblockSite: operatorProcedure
    .meta(
      rest("POST", "/api/admin/workspace-sites/unblock", {
        summary: "解除站点地址的禁止",
        description: "工作区又可以添加这个地址。",
        auth: "admin",
      }),
    )
    .input(siteAddressInput)
    .output(orFailure(successOf(z.object({ url: z.string() }))))
    .mutation(async ({ ctx, input }) => {
      const url = normalizeSiteUrl(input.url);
      await unblockAddress(ctx.db, url);
      await audit(ctx.db, { action: "siteUnblock", actor: actorOf(ctx), before: { url } });
      return { success: true as const, data: { url } };
    }),
});
