import { z } from "zod";
import { overviewRowSchema } from "../site-data/schemas";

/** The browser's accounts as the service lists them: the procedures' outputs and the domain's types. */

/** The last automatic check-in of a saved account (docs/design.md 20). */
export const autoCheckinSchema = z
  .object({
    day: z.string().describe("站点的日期（Veloera 按 UTC，new-api 按北京时间）"),
    state: z
      .enum(["done", "already", "manual", "disabled", "unsupported", "failed"])
      .describe(
        "done 已签到；already 今天已签过；manual 需手动签到；disabled 站点未开启；unsupported 不支持；failed 失败",
      ),
    message: z.string(),
    at: z.iso.datetime(),
  })
  .meta({ id: "AutoCheckin" });
export type AutoCheckin = z.infer<typeof autoCheckinSchema>;

/** What a workspace keeps about one of its accounts besides the site's own data (docs/design.md 17). */
export const savedFieldsSchema = z
  .object({
    id: z.number().int().describe("工作区账户 id（REST 中的 ?account=）"),
    alias: z.string().nullable(),
    tags: z.array(z.string()),
    pinned: z.boolean(),
    excluded: z.boolean().describe("不计入合计"),
    order: z.number().int(),
    state: z
      .enum(["ok", "reauth", "site_removed"])
      .describe("ok：正常；reauth：站点拒绝了保存的令牌，需要重新授权；site_removed：站点已移除"),
    stateMessage: z.string().nullable(),
    autoCheckin: z.boolean().describe("自动签到：每天在站点的一天里分散的时刻自动签到（new-api、Veloera 站点）"),
    checkin: autoCheckinSchema.nullable().describe("上一次自动签到的结果；还没有时为 null"),
    sync: z
      .object({
        at: z.iso.datetime().nullable().describe("上次完成后台同步的时间"),
        next: z.iso.datetime().nullable().describe("下次同步的大致时间（LEDGER_SYNC_MINUTES 为 0 时为 null）"),
        running: z.boolean(),
        error: z.string().nullable().describe("上次同步失败的原因；成功后为 null"),
      })
      .optional()
      .describe("服务器为该账户做的后台工作（账本同步）"),
    alerts: z
      .array(z.object({ kind: z.string(), message: z.string() }))
      .optional()
      .describe("该账户正在打开的提醒（新的在前）"),
  })
  .meta({ id: "SavedAccountFields" });

const listedAccountSchema = z.object({
  key: z.string().describe("账户标识（不是令牌）"),
  active: z.boolean(),
  site: z.object({ id: z.number().int(), name: z.string(), url: z.string() }).nullable(),
  userId: z.number(),
  username: z.string(),
  displayName: z.string(),
  expiresAt: z.string().describe("会话到期时间（ISO 8601）；已过期的行为空字符串"),
  saved: savedFieldsSchema.optional().describe("工作区中保存的账户才有：别名、标签、状态等"),
});
export type ListedAccount = z.infer<typeof listedAccountSchema>;

/** An account whose session ended since the browser was last told. */
const droppedAccountSchema = z.object({
  siteId: z.number().int(),
  siteName: z.string().nullable(),
  userId: z.number(),
});
export type DroppedAccount = z.infer<typeof droppedAccountSchema>;

export const accountListSchema = z.object({
  accounts: z.array(listedAccountSchema),
  dropped: z.array(droppedAccountSchema),
});

export const accountRowSchema = listedAccountSchema.extend(overviewRowSchema.shape).meta({ id: "OverviewRow" });
export type AccountRow = z.infer<typeof accountRowSchema>;

export const overviewSchema = z
  .object({
    rows: z.array(accountRowSchema),
    totals: z.object({
      balanceUsd: z.number().describe("各账户剩余额度折合美元之和（按各站点的 quota_per_unit）"),
      todayUsd: z.number(),
      todayRequests: z.number().int(),
      accounts: z.number().int().describe("计入合计的账户数（state 为 ok 的账户）"),
      convertedAccounts: z.number().int().describe("其中站点以其他货币或额度显示、已折算回美元的账户数"),
      staleAccounts: z
        .number()
        .int()
        .describe("站点暂时读取失败、按账本最近一次同步的余额计入 balanceUsd 的账户数（这些账户不计入 accounts）"),
      staleSince: z.iso.datetime().nullable().describe("其中最旧的余额记下的时间；没有时为 null"),
    }),
  })
  .meta({ id: "AccountsOverview" });
