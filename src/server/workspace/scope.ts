/**
 * A workspace's accounts as the account routes read them: each saved account with the session its
 * site is read through, or, when it cannot be used now (需要重新授权, 站点已移除), a stand-in that
 * reads its ledger only, so nothing of its history is out of reach. Listings name saved accounts
 * by their id.
 */
import type { AutoCheckin, ListedAccount } from "../accounts/schemas";
import type { LiveSession } from "../session/store";
import type { SavedAccount, SavedAccounts } from "./saved-accounts";

/** A saved account and how it is read now: `problem` says why its site is not (null when it is). */
export type ScopedAccount = { saved: SavedAccount; session: LiveSession; problem: string | null };

/** A session that reads the account's ledger and nothing else (its id names no stored session). */
export function ledgerOnlySession(saved: SavedAccount, site: { id: number; name: string; url: string } | null) {
  return {
    id: `saved:${saved.id}`,
    key: String(saved.id),
    userId: saved.userId,
    siteId: saved.siteId,
    siteUrl: saved.siteUrl,
    siteUserId: saved.siteUserId,
    userInfo: JSON.stringify({ id: saved.siteUserId, username: saved.username, display_name: saved.displayName }),
    createdAt: saved.createdAt,
    expiresAt: saved.stateAt,
    credential: saved.credential,
    site,
    alias: saved.alias,
    ...(saved.heldUntil === null ? {} : { heldUntil: saved.heldUntil }),
  } satisfies LiveSession;
}

/** Whether a session is a ledger-only stand-in (no site is ever asked through it). */
export function isLedgerOnly(session: LiveSession): boolean {
  return session.id.startsWith("saved:");
}

/** The saved account's session for reading (renewed when it is ending), or its ledger-only stand-in. */
export async function scoped(
  accounts: SavedAccounts,
  saved: SavedAccount,
  sites: Map<number, { id: number; name: string; url: string }>,
): Promise<ScopedAccount> {
  const site = sites.get(saved.siteId) ?? null;
  if (saved.state === "ok") {
    const session = await accounts.sessionOf(saved);
    if (session) return { saved, session: { ...session, key: String(saved.id), alias: saved.alias }, problem: null };
    // Renewal may have just found the token refused.
    const now = await accounts.get(saved.workspaceId, saved.id);
    const problem = now.state === "ok" ? "暂时无法连接站点续期会话，请稍后再试" : (now.stateMessage ?? "需要重新授权");
    return { saved: now, session: ledgerOnlySession(now, site), problem };
  }
  return { saved, session: ledgerOnlySession(saved, site), problem: saved.stateMessage ?? "需要重新授权" };
}

/** How the workspace's listing shows a saved account (the dashboard's account list and rows). */
/** The last automatic check-in as the answers show it. */
export function checkinShown(checkin: SavedAccount["checkin"]): AutoCheckin | null {
  return checkin ? { ...checkin, state: checkin.state as AutoCheckin["state"], at: checkin.at.toISOString() } : null;
}

export function listedSaved(scopedAccount: ScopedAccount, active: boolean): ListedAccount {
  const { saved, session } = scopedAccount;
  return {
    key: String(saved.id),
    active,
    site: session.site,
    userId: saved.siteUserId,
    username: saved.username,
    displayName: saved.displayName,
    expiresAt: scopedAccount.problem === null ? session.expiresAt.toISOString() : "",
    saved: {
      id: saved.id,
      alias: saved.alias,
      tags: saved.tags,
      pinned: saved.pinned,
      excluded: saved.excluded,
      order: saved.order,
      state: saved.state,
      stateMessage: saved.stateMessage,
      autoCheckin: saved.autoCheckin,
      checkin: checkinShown(saved.checkin),
    },
  };
}
