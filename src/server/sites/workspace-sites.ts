/**
 * Sites a workspace adds itself (docs/design.md 25): the address is probed first (public addresses
 * only unless the operator allows private ones, no redirect, bounded answer and time), then saved
 * as a site of origin `workspace`, offered to the workspaces that added it and to nobody else. One
 * address is one site: a second workspace adding it shares the row (its budget, its price and
 * status reads), never the other's accounts. The operator may turn this off, limit it, and block
 * an address (which takes the site from every workspace that had it).
 */
import type { Db } from "../db/client";
import { env } from "../core/env";
import { Refusal } from "../core/errors";
import { PRIVATE_REFUSAL, guardSite, guardSites } from "../net/site-guard";
import { checkOutboundUrl } from "../net/outbound";
import type { SiteProfile } from "../gateway/families";
import { probeUrl, type ProbeOptions } from "./probe";
import { SiteError, normalizeSiteUrl, siteRegistry, type Site } from "./registry";

/** What a probe of an address found, as the add form shows it before saving. */
export type SiteFinding = { url: string; ms: number; profile: SiteProfile; name: string };

/** The name a new site goes by: its own system name, else its host. */
const nameOf = (url: string, profile: SiteProfile) => (profile.systemName?.trim() || new URL(url).host).slice(0, 100);

export function workspaceSites(db: Db) {
  const registry = siteRegistry(db);

  /** Refuses when the feature is off, the address is blocked, or the registered sites already have it. */
  async function refuseAddress(url: string): Promise<void> {
    if (env().WORKSPACE_SITES === 0) throw new SiteError("本服务未开放自行添加站点，请联系管理员登记");
    // A literal internal address is refused before any budget is spent on it (a name, as it connects).
    if (!env().WORKSPACE_SITES_ALLOW_PRIVATE) {
      try {
        checkOutboundUrl(url, false);
      } catch {
        throw new SiteError(`无法读取这个站点（${PRIVATE_REFUSAL}），请检查地址`);
      }
    }
    if (await db.blockedSite.findUnique({ where: { url }, select: { url: true } })) {
      throw new SiteError("管理员已禁止添加这个站点地址");
    }
    const registered = await db.site.findFirst({ where: { url, origin: "operator" }, select: { name: true } });
    if (registered) {
      throw new SiteError(`这个地址已是本服务登记的站点「${registered.name}」，添加账户时直接选择它即可`);
    }
  }

  const probeOptions = (opts: ProbeOptions): ProbeOptions => ({
    ...opts,
    guard: !env().WORKSPACE_SITES_ALLOW_PRIVATE,
  });

  return {
    /** The workspace's own sites, oldest first. */
    async list(workspaceId: number): Promise<Array<Site & { addedAt: string }>> {
      const links = await db.workspaceSite.findMany({
        where: { workspaceId },
        select: { siteId: true, createdAt: true },
        orderBy: { createdAt: "asc" },
      });
      const sites = await db.site.findMany({
        where: { id: { in: links.map((l) => l.siteId) }, origin: "workspace" },
        select: { id: true, name: true, url: true },
      });
      const byId = new Map(sites.map((s) => [s.id, s]));
      return links.flatMap((l) => {
        const site = byId.get(l.siteId);
        return site ? [{ ...site, addedAt: l.createdAt.toISOString() }] : [];
      });
    },

    /** Whether the workspace may use the site: one of the operator's, or one of its own. */
    async usable(workspaceId: number | null, siteId: number): Promise<boolean> {
      const site = await db.site.findUnique({ where: { id: siteId }, select: { origin: true } });
      if (!site) return false;
      if (site.origin !== "workspace") return true;
      if (workspaceId === null) return false;
      const link = await db.workspaceSite.findUnique({
        where: { workspaceId_siteId: { workspaceId, siteId } },
        select: { siteId: true },
      });
      return link !== null;
    },

    /** Asks the address what it is, saving nothing: the add form shows this before 保存. */
    async probe(rawUrl: string, opts: ProbeOptions): Promise<SiteFinding> {
      const url = normalizeSiteUrl(rawUrl);
      await refuseAddress(url);
      const result = await probeUrl(url, probeOptions(opts));
      if (!result.ok) throw new SiteError(`无法读取这个站点（${result.error}），请检查地址`);
      return { url, ms: result.ms, profile: result.profile, name: nameOf(url, result.profile) };
    },

    /**
     * Adds the address to the workspace: probed again (what was shown may have changed), then the
     * site another workspace added at that address, or a new one. Refused past the limit.
     */
    async add(workspaceId: number, rawUrl: string, opts: ProbeOptions, now = new Date()): Promise<Site> {
      const url = normalizeSiteUrl(rawUrl);
      await refuseAddress(url);
      const count = await db.workspaceSite.count({ where: { workspaceId } });
      const limit = env().WORKSPACE_SITES;
      if (count >= limit) throw new SiteError(`每个工作区最多添加 ${limit} 个站点，请先移除不用的站点`);
      const shared = await db.site.findFirst({ where: { url, origin: "workspace" }, select: { id: true } });
      if (shared) {
        const mine = await db.workspaceSite.findUnique({
          where: { workspaceId_siteId: { workspaceId, siteId: shared.id } },
          select: { siteId: true },
        });
        if (mine) throw new SiteError("这个站点已在本工作区的站点中");
      }
      const result = shared
        ? await probeUrl(url, probeOptions(opts), shared.id)
        : await probeUrl(url, probeOptions(opts));
      if (!result.ok) throw new SiteError(`无法读取这个站点（${result.error}），请检查地址`);
      const siteId =
        shared?.id ??
        (
          await db.site.create({
            data: { name: nameOf(url, result.profile), url, origin: "workspace" },
            select: { id: true },
          })
        ).id;
      guardSite(url);
      await registry.saveHealth(siteId, { at: now, ok: true, ms: result.ms, error: null });
      await registry.saveProfile(siteId, result.profile, now);
      try {
        await db.workspaceSite.create({ data: { workspaceId, siteId, createdAt: now }, select: { siteId: true } });
      } catch {
        // The same add twice at once: the first made the link.
      }
      const site = await registry.find(siteId);
      if (!site) throw new SiteError("站点已被移除，请重试");
      return site;
    },

    /**
     * Takes the site from the workspace (refused while `accounts` of the workspace are on it); the
     * site itself goes with its last workspace.
     */
    async remove(workspaceId: number, siteId: number, accounts: number): Promise<void> {
      const link = await db.workspaceSite.findUnique({
        where: { workspaceId_siteId: { workspaceId, siteId } },
        select: { siteId: true },
      });
      if (!link) throw new Refusal("本工作区没有这个站点", "NOT_FOUND");
      if (accounts > 0) throw new SiteError(`本工作区还有 ${accounts} 个账户在这个站点上，请先移除它们`);
      await db.workspaceSite.deleteMany({ where: { workspaceId, siteId } });
      if ((await db.workspaceSite.count({ where: { siteId } })) === 0) {
        await db.site.deleteMany({ where: { id: siteId, origin: "workspace" } });
      }
      await refreshSiteGuard(db);
    },
  };
}

/** Every workspace site with how many workspaces use it, for /admin. */
export async function listWorkspaceSites(
  db: Db,
): Promise<Array<Site & { family: string | null; version: string | null; workspaces: number }>> {
  const sites = await db.site.findMany({
    where: { origin: "workspace" },
    select: { id: true, name: true, url: true, family: true, version: true },
    orderBy: { id: "asc" },
  });
  const counts = await db.workspaceSite.groupBy({ by: ["siteId"], _count: { _all: true } });
  const bySite = new Map(counts.map((c) => [c.siteId, c._count._all]));
  return sites.map((s) => ({ ...s, workspaces: bySite.get(s.id) ?? 0 }));
}

/** The addresses the operator blocked. */
export async function blockedAddresses(db: Db): Promise<Array<{ url: string; at: string }>> {
  const rows = await db.blockedSite.findMany({ select: { url: true, createdAt: true }, orderBy: { createdAt: "asc" } });
  return rows.map((r) => ({ url: r.url, at: r.createdAt.toISOString() }));
}

/**
 * Blocks an address: no workspace may add it, and a workspace site there is taken from every
 * workspace (its accounts then say 站点已移除, their history kept). The operator's own sites are
 * removed in the site list instead.
 */
export async function blockAddress(db: Db, rawUrl: string, now = new Date()): Promise<{ removed: number }> {
  const url = normalizeSiteUrl(rawUrl);
  const registered = await db.site.findFirst({ where: { url, origin: "operator" }, select: { name: true } });
  if (registered) throw new SiteError(`这是登记的站点「${registered.name}」：请在上方的站点列表中移除它`);
  await db.blockedSite.upsert({ where: { url }, create: { url, createdAt: now }, update: {}, select: { url: true } });
  const sites = await db.site.findMany({ where: { url, origin: "workspace" }, select: { id: true } });
  const ids = sites.map((s) => s.id);
  await db.workspaceSite.deleteMany({ where: { siteId: { in: ids } } });
  await db.site.deleteMany({ where: { id: { in: ids } } });
  await refreshSiteGuard(db);
  return { removed: ids.length };
}

export async function unblockAddress(db: Db, rawUrl: string): Promise<void> {
  await db.blockedSite.deleteMany({ where: { url: normalizeSiteUrl(rawUrl) } });
}

/** Loads the addresses to guard from the store (at start, every minute, after a change). */
export async function refreshSiteGuard(db: Db): Promise<void> {
  const rows = await db.site.findMany({ where: { origin: "workspace" }, select: { url: true } });
  guardSites(rows.map((r) => r.url));
}
