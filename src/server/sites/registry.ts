import { z } from "zod";
import type { Db } from "../db/client";
import {
  DISPLAY_TYPES,
  FAMILIES,
  UNPROBED,
  keptQuotaPerUnit,
  type DisplayType,
  type Family,
  type SiteProfile,
} from "../gateway/families";
import { Refusal } from "../core/errors";
import { unguardSite } from "../net/site-guard";
import { BOUNDS, within } from "../../shared/bounds";

export const siteSchema = z
  .object({ id: z.number().int().positive(), name: z.string(), url: z.url() })
  .meta({ id: "Site", description: "站点（来自站点注册表）" });

export type Site = z.infer<typeof siteSchema>;

/** Why a site was not added or changed (a bad address, an unknown id), in words. */
export class SiteError extends Refusal {}

const siteSelect = { id: true, name: true, url: true } as const;
const profileSelect = {
  ...siteSelect,
  family: true,
  version: true,
  systemName: true,
  quotaPerUnit: true,
  displayType: true,
  currencySymbol: true,
  currencyRate: true,
  probedAt: true,
  requestsPerMinute: true,
} as const;

/** A site with what its last probe found (the unprobed defaults before any). */
export type ProfiledSite = Site & SiteProfile & { probedAt: Date | null; requestsPerMinute: number | null };

/** The last probe of a site, successful or not. */
export type SiteHealth = { at: Date; ok: boolean; ms: number; error: string | null };

type ProfileRow = Site & {
  family: string | null;
  version: string | null;
  systemName: string | null;
  quotaPerUnit: number | null;
  displayType: string | null;
  currencySymbol: string | null;
  currencyRate: number | null;
  probedAt: Date | null;
  requestsPerMinute: number | null;
};

function fromProfileRow(row: ProfileRow): ProfiledSite {
  const family = (FAMILIES as readonly string[]).includes(row.family ?? "") ? (row.family as Family) : UNPROBED.family;
  const display = (DISPLAY_TYPES as readonly string[]).includes(row.displayType ?? "")
    ? (row.displayType as DisplayType)
    : UNPROBED.money.display;
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    family,
    version: row.version,
    systemName: row.systemName,
    money: {
      quotaPerUnit: keptQuotaPerUnit(row.quotaPerUnit),
      display,
      symbol: row.currencySymbol ?? (display === "TOKENS" ? "" : UNPROBED.money.symbol),
      rate: within(row.currencyRate, BOUNDS.exchangeRate.min, BOUNDS.exchangeRate.max) ?? UNPROBED.money.rate,
    },
    probedAt: row.probedAt,
    requestsPerMinute: row.requestsPerMinute,
  };
}
const MAX_SITE_ID = 2_147_483_647;

/** A site id given as a positive integer or a string of digits; null when it cannot name a site. */
export function parseSiteId(raw: unknown): number | null {
  let n: number;
  if (typeof raw === "number") n = raw;
  else if (typeof raw === "string" && /^\d{1,10}$/.test(raw)) n = Number(raw);
  else return null;
  return Number.isInteger(n) && n >= 1 && n <= MAX_SITE_ID ? n : null;
}

/** An http(s) base URL without trailing slash, query or fragment. */
export function normalizeSiteUrl(raw: string): string {
  if (raw.trim() === "") throw new SiteError("请填写站点地址");
  // An address without its scheme (`127.0.0.1:3095/`, `api.example.com`): say how it is written.
  const bare = raw.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(bare) && /^[\w.-]+(:\d{1,5})?(\/.*)?$/.test(bare)) {
    throw new SiteError(`站点地址要以 http:// 或 https:// 开头，如 https://${bare.replace(/\/+$/, "")}`);
  }
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new SiteError(`站点地址无效: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new SiteError(`站点地址必须以 http:// 或 https:// 开头: ${raw}`);
  }
  if (url.username || url.password) throw new SiteError("站点地址不能包含用户名或密码");
  if (url.search || url.hash) throw new SiteError("站点地址不能包含查询参数或 # 片段");
  return url.toString().replace(/\/+$/, "");
}

function cleanName(raw: string): string {
  const name = raw.trim();
  if (!name) throw new SiteError("站点名称不能为空");
  if (name.length > 100) throw new SiteError("站点名称不能超过 100 个字符");
  return name;
}

export function siteRegistry(db: Db) {
  /** One address, one site (`self` may keep its own): two names for one gateway would give it two budgets. */
  async function refuseTaken(url: string, self: number | null): Promise<void> {
    const other = await db.site.findFirst({
      where: { url, origin: "operator", ...(self === null ? {} : { id: { not: self } }) },
      select: { id: true, name: true },
    });
    if (other) throw new SiteError(`该地址已登记为站点「${other.name}」（编号 ${other.id}）：同一个网关只登记一次`);
  }

  return {
    /** The operator's sites, offered to everyone (a workspace's own sites are listed by workspace-sites.ts). */
    list(): Promise<Site[]> {
      return db.site.findMany({ where: { origin: "operator" }, select: siteSelect, orderBy: { id: "asc" } });
    },

    /** The address of each of these sites (absent: no such site). */
    async urls(ids: number[]): Promise<Map<number, string>> {
      if (ids.length === 0) return new Map();
      const rows = await db.site.findMany({ where: { id: { in: ids } }, select: { id: true, url: true } });
      return new Map(rows.map((r) => [r.id, r.url]));
    },

    find(id: number): Promise<Site | null> {
      return db.site.findUnique({ where: { id }, select: siteSelect });
    },

    async profiled(id: number): Promise<ProfiledSite | null> {
      const row = await db.site.findUnique({ where: { id }, select: profileSelect });
      return row ? fromProfileRow(row) : null;
    },

    /** Every site with its profile; the operator's only with `operatorOnly`. */
    async listProfiled(operatorOnly = false): Promise<ProfiledSite[]> {
      const rows = await db.site.findMany({
        ...(operatorOnly ? { where: { origin: "operator" } } : {}),
        select: profileSelect,
        orderBy: { id: "asc" },
      });
      return rows.map(fromProfileRow);
    },

    async saveProfile(id: number, profile: SiteProfile, probedAt = new Date()): Promise<ProfiledSite | null> {
      const { count } = await db.site.updateMany({
        where: { id },
        data: {
          family: profile.family,
          version: profile.version,
          systemName: profile.systemName,
          quotaPerUnit: profile.money.quotaPerUnit,
          displayType: profile.money.display,
          currencySymbol: profile.money.symbol,
          currencyRate: profile.money.rate,
          probedAt,
        },
      });
      return count > 0 ? this.profiled(id) : null;
    },

    async saveHealth(id: number, health: SiteHealth): Promise<void> {
      await db.site.updateMany({
        where: { id },
        data: { healthAt: health.at, healthOk: health.ok, healthMs: health.ms, healthError: health.error },
      });
    },

    /** The last probe of every site that has been probed, by site id. */
    async healthById(): Promise<Map<number, SiteHealth>> {
      const rows = await db.site.findMany({
        where: { healthAt: { not: null } },
        select: { id: true, healthAt: true, healthOk: true, healthMs: true, healthError: true },
      });
      return new Map(
        rows.map((r) => [
          r.id,
          { at: r.healthAt as Date, ok: r.healthOk === true, ms: r.healthMs ?? 0, error: r.healthError },
        ]),
      );
    },

    /** This site's request budget per minute (null: the deployment's default). */
    async setBudget(id: number, perMinute: number | null): Promise<void> {
      if (perMinute !== null && (!Number.isInteger(perMinute) || perMinute < 1 || perMinute > 100_000)) {
        throw new SiteError("每分钟请求数必须是 1 到 100000 之间的整数");
      }
      const { count } = await db.site.updateMany({ where: { id }, data: { requestsPerMinute: perMinute } });
      if (count === 0) throw new SiteError(`站点不存在: ${id}`);
    },

    /** Refuses an address another site has (before anything is asked of it). */
    addressFree: (url: string, self: number | null = null) => refuseTaken(url, self),

    /**
     * Registers a site. An address a workspace added itself becomes the operator's (offered to
     * everyone, its accounts, budget and history kept) rather than a second site.
     */
    async add(input: { name: string; url: string }): Promise<Site> {
      const data = { name: cleanName(input.name), url: normalizeSiteUrl(input.url) };
      await refuseTaken(data.url, null);
      const own = await db.site.findFirst({ where: { url: data.url, origin: "workspace" }, select: { id: true } });
      if (own) {
        unguardSite(data.url);
        await db.workspaceSite.deleteMany({ where: { siteId: own.id } });
        return db.site.update({ where: { id: own.id }, data: { ...data, origin: "operator" }, select: siteSelect });
      }
      return db.site.create({ data, select: siteSelect });
    },

    async update(id: number, input: { name?: string; url?: string }): Promise<Site> {
      const data: { name?: string; url?: string } = {};
      if (input.name !== undefined) data.name = cleanName(input.name);
      if (input.url !== undefined) data.url = normalizeSiteUrl(input.url);
      const before = await this.find(id);
      if (!before) throw new SiteError(`站点不存在: ${id}`);
      if (data.url !== undefined) {
        await refuseTaken(data.url, id);
        if (await db.site.findFirst({ where: { url: data.url, origin: "workspace" }, select: { id: true } })) {
          throw new SiteError("该地址是工作区自行添加的站点：请用「添加站点」登记它，它的账户和历史会一并保留");
        }
      }
      // Another address may be another gateway: probe it afresh before trusting the old profile.
      const moved = data.url !== undefined && data.url !== before.url;
      return db.site.update({
        where: { id },
        data: { ...data, ...(moved ? { probedAt: null } : {}) },
        select: siteSelect,
      });
    },

    async remove(id: number): Promise<Site> {
      const site = await this.find(id);
      if (!site) throw new SiteError(`站点不存在: ${id}`);
      await db.site.deleteMany({ where: { id } });
      return site;
    },
  };
}
