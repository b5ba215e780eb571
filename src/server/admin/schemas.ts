import { z } from "zod";
import { moneySchema } from "../gateway/families";

/** What site administration answers: the procedures' outputs and the domain's types. */

const iso = z.iso.datetime();

export const siteRowSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  url: z.string(),
  family: z.string(),
  version: z.string().nullable(),
  systemName: z.string().nullable(),
  money: moneySchema,
  probedAt: iso.nullable(),
  health: z.object({ at: iso, ok: z.boolean(), ms: z.number(), error: z.string().nullable() }).nullable(),
  requestsPerMinute: z.number().int().nullable(),
  liveSessions: z.number().int(),
  ledgerEntries: z.number().int(),
});
export type AdminSiteRow = z.infer<typeof siteRowSchema>;

/** What a probe found, as the form shows it. */
export const probeFindingSchema = z.discriminatedUnion("reachable", [
  z.object({
    reachable: z.literal(true),
    ms: z.number(),
    family: z.string(),
    version: z.string().nullable(),
    systemName: z.string().nullable(),
    quotaPerUnit: z.number(),
  }),
  z.object({ reachable: z.literal(false), ms: z.number(), error: z.string() }),
]);
export type ProbeFinding = z.infer<typeof probeFindingSchema>;

/** What a change of address did to the site's sessions and ledger. */
export const moveOutcomeSchema = z.object({
  endedSessions: z.number().int(),
  ledger: z.enum(["kept", "archived"]),
  archivedEntries: z.number().int(),
});
export type MoveOutcome = z.infer<typeof moveOutcomeSchema>;

export const auditPageSchema = z.object({
  entries: z.array(
    z.object({
      id: z.number().int(),
      at: iso,
      action: z.string(),
      actor: z.string(),
      siteId: z.number().int().nullable(),
      count: z.number().int(),
      before: z.unknown(),
      after: z.unknown(),
    }),
  ),
  next: z.number().int().nullable(),
});

/** The workspaces as the operator sees them: who may create one, the invite codes, the counts. */
export const workspacesAdminSchema = z.object({
  mode: z.enum(["open", "invite"]),
  workspaces: z.number().int(),
  accounts: z.number().int(),
  reauth: z.number().int().describe("需要重新授权的账户数"),
  sites: z
    .array(
      z.object({
        siteId: z.number().int(),
        siteName: z.string().nullable(),
        accounts: z.number().int().describe("各工作区保存的账户数"),
        reauth: z.number().int(),
        failing: z.number().int().describe("上次同步失败的账本数"),
      }),
    )
    .describe("按站点：保存的账户、需要重新授权的、同步失败的"),
  invites: z.array(
    z.object({
      id: z.string().describe("邀请码散列的前 12 位（邀请码本身不保存）"),
      note: z.string().nullable(),
      createdAt: z.iso.datetime(),
      expiresAt: z.iso.datetime(),
      usedAt: z.iso.datetime().nullable(),
      state: z.enum(["open", "used", "expired"]),
    }),
  ),
});
