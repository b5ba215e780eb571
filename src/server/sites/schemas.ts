/** The answers about a workspace's own sites (docs/design.md 25). */
import { z } from "zod";
import { FAMILIES, moneySchema } from "../gateway/families";

const iso = z.string().describe("ISO 8601 时间");

const siteRefSchema = z.object({ id: z.number().int(), name: z.string(), url: z.string() });

export const workspaceSitesSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      own: z.array(siteRefSchema.extend({ addedAt: iso })).describe("本工作区自行添加的站点（只有本工作区可见）"),
      registered: z.array(siteRefSchema).describe("本服务登记的站点（所有人可用）"),
      limit: z.number().int().describe("每个工作区最多可自行添加的站点数；0 表示本服务未开放"),
    }),
  })
  .meta({ id: "WorkspaceSites" });

export const siteFindingSchema = z
  .object({
    success: z.literal(true),
    data: z.object({
      url: z.string().describe("规范化后的站点地址（保存时用它）"),
      name: z.string().describe("保存后的站点名称：站点自己的 system_name，没有时为域名"),
      ms: z.number().describe("探测耗时（毫秒）"),
      family: z.enum(FAMILIES),
      version: z.string().nullable(),
      money: moneySchema,
    }),
  })
  .meta({ id: "SiteFinding" });

export const siteAddedSchema = z
  .object({ success: z.literal(true), data: z.object({ site: siteRefSchema }) })
  .meta({ id: "WorkspaceSiteAdded" });
