/**
 * Every account of one browser in one answer (docs/design.md 11, 12): each site asked side by side, a
 * site that hangs or fails marking only its own row, and totals in USD.
 */
import { MSG } from "../core/messages";
import { round6 } from "../../shared/money";
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

/**
 * The balance the account's last sync noted, for a row whose site cannot be read now. The ledger
 * lives above this folder: the caller hands it in (ledger/analytics.ts lastBalanceOf).
 */
type LastBalance = (session: LiveSession) => Promise<{ quota: number; usd: number; at: string } | null>;

/** 预计可用天数 of an account at the balance its row shows (ledger/days-left.ts, handed in from above). */
type DaysLeft = (session: LiveSession, balanceQuota: number) => Promise<number | null>;

/** What the ledger tells an account's row: the last balance it knew, and the days left. */
export type RowLedger = { lastBalance: LastBalance; daysLeft: DaysLeft };

/** A row of a summary with its days left, by the ledger's one definition. */
export async function withDaysLeft<R extends OverviewRow>(
  row: R,
  session: LiveSession,
  ledger?: RowLedger,
): Promise<R> {
  if (row.state !== "ok" || !row.summary || !ledger) return row;
  return { ...row, daysLeft: await ledger.daysLeft(session, row.summary.balance.quota) };
}

/** One account's row: its live summary, or why there is none and the last balance the ledger knew. */
export async function rowOf(
  session: LiveSession,
  tz: string,
  deps: SiteDataDeps,
  ledger?: RowLedger,
): Promise<OverviewRow> {
  const row: OverviewRow = session.site
    ? await overviewRow(accountOf(session), tz, deps)
    : { state: "unreachable", message: MSG.siteRemoved, summary: null, daysLeft: null, lastKnown: null };
  if (row.state === "ok") return withDaysLeft(row, session, ledger);
  if (!ledger) return row;
  const last = await ledger.lastBalance(session);
  return last ? { ...row, lastKnown: { balance: { quota: last.quota, usd: last.usd }, at: last.at } } : row;
}

export function overviewTotals(rows: OverviewRow[]) {
  const ok = rows.filter((r) => r.state === "ok" && r.summary);
  const sum = (pick: (r: OverviewRow) => number) => round6(ok.reduce((s, r) => s + pick(r), 0));
  // A site that cannot be read counts with the balance its last sync noted, an account waiting for
  // its first sync with the balance its site gave when it was added, and the total says so.
  const stale = rows.filter((r) => r.state !== "ok" && r.state !== "expired" && r.lastKnown);
  const staleUsd = stale.reduce((s, r) => s + (r.lastKnown?.balance.usd ?? 0), 0);
  return {
    balanceUsd: round6(sum((r) => r.summary?.balance.usd ?? 0) + staleUsd),
    todayUsd: sum((r) => r.summary?.today.usd ?? 0),
    todayRequests: ok.reduce((s, r) => s + (r.summary?.todayRequests ?? 0), 0),
    accounts: ok.length,
    convertedAccounts: ok.filter((r) => r.summary?.money.display !== "USD").length,
    staleAccounts: stale.length,
    staleSince: stale.map((r) => r.lastKnown?.at ?? "").sort()[0] ?? null,
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
  ledger?: RowLedger,
) {
  const listing = browser
    ? await listAccounts(db, browser)
    : { accounts: [listed(own, true)], sessions: [own], dropped: [], cookie: null };
  const live = await Promise.all(
    listing.sessions.map(async (session, i): Promise<AccountRow> => {
      const account = listing.accounts[i] as ListedAccount;
      return { ...account, ...(await rowOf(session, tz, deps, ledger)) };
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
    lastKnown: null,
  }));
  const rows = [...live, ...expired];
  return { rows, totals: overviewTotals(rows), cookie: listing.cookie };
}
