import { z } from "zod";
import type { Db } from "../db/client";

export const siteSchema = z
  .object({ id: z.number().int().positive(), name: z.string(), url: z.url() })
  .meta({ id: "Site", description: "站点（来自站点注册表）" });

export type Site = z.infer<typeof siteSchema>;

export class SiteError extends Error {}

const siteSelect = { id: true, name: true, url: true } as const;
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
  return {
    list(): Promise<Site[]> {
      return db.site.findMany({ select: siteSelect, orderBy: { id: "asc" } });
    },

    find(id: number): Promise<Site | null> {
      return db.site.findUnique({ where: { id }, select: siteSelect });
    },

    add(input: { name: string; url: string }): Promise<Site> {
      const data = { name: cleanName(input.name), url: normalizeSiteUrl(input.url) };
      return db.site.create({ data, select: siteSelect });
    },

    async update(id: number, input: { name?: string; url?: string }): Promise<Site> {
      const data: { name?: string; url?: string } = {};
      if (input.name !== undefined) data.name = cleanName(input.name);
      if (input.url !== undefined) data.url = normalizeSiteUrl(input.url);
      if (!(await this.find(id))) throw new SiteError(`站点不存在: ${id}`);
      return db.site.update({ where: { id }, data, select: siteSelect });
    },

    async remove(id: number): Promise<Site> {
      const site = await this.find(id);
      if (!site) throw new SiteError(`站点不存在: ${id}`);
      await db.site.deleteMany({ where: { id } });
      return site;
    },
  };
}
