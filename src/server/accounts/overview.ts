/**
 * Every account of one browser in one answer (design.md 11, 12): each site asked side by side, a
 * site that hangs or fails marking only its own row, and totals in USD.
 */
import { MSG } from "../core/messages";
import type { Db } from "../db/client";
import type { BrowserAccounts } from "../session/cookie";
import type { LiveSession } from "../session/store";
import { listAccounts, listed } from "./browser-accounts";
import type { AccountRow, ListedAccount } from "./schemas";
import { overviewRow, type Account, type OverviewRow, type SiteDataDeps } from "../site-data/site-data";

export type { AccountRow } from "./schemas";

/** The account a session signs in to, as the site-data operations take it. */
export function accountOf(session: LiveSession): Account {
  return {
    sessionId: session.id,
    siteId: session.siteId,
    siteUrl: session.siteUrl,
    siteUserId: session.siteUserId,
    userId: session.userId,
  };
}

/** One account's row: its live summary, or why there is none. */
export async function rowOf(session: LiveSession, tz: string, deps: SiteDataDeps): Promise<OverviewRow> {
  if (!session.site) return { state: "unreachable", message: MSG.siteRemoved, summary: null, daysLeft: null };
  return overviewRow(accountOf(session), tz, deps);
}

export function totalsOf(rows: OverviewRow[]) {
  const ok = rows.filter((r) => r.state === "ok" && r.summary);
  const sum = (pick: (r: OverviewRow) => number) => Math.round(ok.reduce((s, r) => s + pick(r), 0) * 1e6) / 1e6;
  return {
    balanceUsd: sum((r) => r.summary?.balance.usd ?? 0),
    todayUsd: sum((r) => r.summary?.today.usd ?? 0),
    todayRequests: ok.reduce((s, r) => s + (r.summary?.todayRequests ?? 0), 0),
    accounts: ok.length,
    convertedAccounts: ok.filter((r) => r.summary?.money.display !== "USD").length,
  };
}

/**
 * The overview of a browser's accounts (with Bearer: the one account). Accounts that dropped out
 * since last told appear once, as expired rows; `cookie` is the browser's list without them.
 */
export async function overview(
  db: Db,
  browser: BrowserAccounts | null,
  own: LiveSession,
  tz: string,
  deps: SiteDataDeps,
) {
  const listing = browser
    ? await listAccounts(db, browser)
    : { accounts: [listed(own, true)], sessions: [own], dropped: [], cookie: null };
  const live = await Promise.all(
    listing.sessions.map(async (session, i): Promise<AccountRow> => {
      const account = listing.accounts[i] as ListedAccount;
      return { ...account, ...(await rowOf(session, tz, deps)) };
    }),
  );
  const expired: AccountRow[] = listing.dropped.map((d) => ({
    key: "",
    active: false,
    site: null,
    userId: d.userId,
    username: "",
    displayName: d.siteName ? `${d.siteName} 的用户 ${d.userId}` : `用户 ${d.userId}`,
    expiresAt: "",
    state: "expired",
    message: "会话已过期或已在别处退出，请重新登录",
    summary: null,
    daysLeft: null,
  }));
  const rows = [...live, ...expired];
  return { rows, totals: totalsOf(rows), cookie: listing.cookie };
}
