/**
 * Who may create a workspace: the operator's choice (in /admin and the CLI), open to anyone (the
 * default; creations per address limited) or by one-time invite code only. An invite code is shown
 * once; only its SHA-256 is kept.
 */
import { createHash, randomBytes } from "node:crypto";
import { Refusal } from "../core/errors";
import type { Db } from "../db/client";

export type SignupMode = "open" | "invite";

const SETTING = "workspace_signup";
const INVITE_DAYS = 30;

const SIGNUP_MSG = {
  inviteRequired: "本站只能凭邀请码创建工作区，请向管理员索取邀请码",
  inviteInvalid: "邀请码无效、已过期或已被使用",
} as const;

const hashCode = (code: string) => createHash("sha256").update(`ws-invite:${code.trim()}`).digest("hex");

export function signup(db: Db) {
  return {
    async mode(): Promise<SignupMode> {
      const row = await db.setting.findUnique({ where: { key: SETTING }, select: { value: true } });
      return row?.value === "invite" ? "invite" : "open";
    },

    async setMode(mode: SignupMode): Promise<void> {
      await db.setting.upsert({
        where: { key: SETTING },
        create: { key: SETTING, value: mode },
        update: { value: mode },
        select: { key: true },
      });
    },

    /** A new invite code (shown once), valid for INVITE_DAYS days. */
    async createInvite(note: string | null, now = new Date()): Promise<{ code: string; expiresAt: Date }> {
      const code = randomBytes(12).toString("base64url");
      const expiresAt = new Date(now.getTime() + INVITE_DAYS * 24 * 60 * 60_000);
      await db.workspaceInvite.create({
        data: { id: hashCode(code), note: note?.trim().slice(0, 100) || null, createdAt: now, expiresAt },
        select: { id: true },
      });
      return { code, expiresAt };
    },

    async invites(now = new Date()) {
      const rows = await db.workspaceInvite.findMany({
        select: { id: true, note: true, createdAt: true, expiresAt: true, usedAt: true },
        orderBy: { createdAt: "desc" },
        take: 100,
      });
      return rows.map((r) => ({
        id: r.id.slice(0, 12),
        note: r.note,
        createdAt: r.createdAt,
        expiresAt: r.expiresAt,
        usedAt: r.usedAt,
        state: r.usedAt ? ("used" as const) : r.expiresAt <= now ? ("expired" as const) : ("open" as const),
      }));
    },
  };
}

/**
 * Spends an invite code for a creation under way, or refuses: one conditional update, so two
 * creations cannot spend one code. Called inside the creation's transaction, so a creation refused
 * after it (a name taken, too many from one address) gives the code back.
 */
export async function spendInvite(
  tx: Pick<Db, "workspaceInvite">,
  code: string | undefined,
  now = new Date(),
): Promise<void> {
  if (!code?.trim()) throw new Refusal(SIGNUP_MSG.inviteRequired, "BAD_REQUEST");
  const { count } = await tx.workspaceInvite.updateMany({
    where: { id: hashCode(code), usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  if (count === 0) throw new Refusal(SIGNUP_MSG.inviteInvalid, "BAD_REQUEST");
}

/** What the operator sees of the workspaces: how many, their accounts, and those needing the person. */
export async function workspaceTotals(db: Db) {
  const [workspaces, bySiteAndState] = await Promise.all([
    db.workspace.count(),
    db.workspaceAccount.groupBy({ by: ["siteId", "state"], _count: { _all: true } }),
  ]);
  const bySite = new Map<number, { accounts: number; reauth: number }>();
  for (const row of bySiteAndState) {
    const site = bySite.get(row.siteId) ?? { accounts: 0, reauth: 0 };
    site.accounts += row._count._all;
    if (row.state === "reauth") site.reauth += row._count._all;
    bySite.set(row.siteId, site);
  }
  const sum = (pick: (x: { accounts: number; reauth: number }) => number) =>
    [...bySite.values()].reduce((n, x) => n + pick(x), 0);
  return { workspaces, accounts: sum((x) => x.accounts), reauth: sum((x) => x.reauth), bySite };
}
