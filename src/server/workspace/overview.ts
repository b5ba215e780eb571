/**
 * The overview of a workspace (docs/design.md 17, 19): every saved account's row, asked side by side,
 * each site's failure marking its own row only, with the last figures the ledger knew for a row
 * that cannot be read now; accounts the person left out of totals are listed but not summed.
 */
import { MSG } from "../core/messages";
import { rowOf, overviewTotals, withDaysLeft, type AccountRow, type RowLedger } from "../accounts/overview";
import type { ListedAccount } from "../accounts/schemas";
import type { Db } from "../db/client";
import type { Summary } from "../site-data/schemas";
import { okRow, type SiteDataDeps } from "../site-data/site-data";
import { sessionStore, type LiveSession } from "../session/store";
import { siteIndex, type SavedAccount, type SavedAccounts } from "./saved-accounts";
import { ledgerOnlySession, listedSaved, scoped, type ScopedAccount } from "./scope";

/**
 * The accounts of a workspace as stored, without asking any site: each with its session when one
 * lives, else its ledger-only stand-in (what the ledger reads and the listing need).
 */
export async function storedScope(db: Db, accounts: SavedAccounts, workspaceId: number): Promise<ScopedAccount[]> {
  const sites = await siteIndex(db);
  const list = await accounts.list(workspaceId, sites);
  const store = sessionStore(db);
  return Promise.all(
    list.map(async (saved): Promise<ScopedAccount> => {
      const live = saved.state === "ok" && saved.sessionId ? await store.findLiveById(saved.sessionId) : null;
      const site = sites.get(saved.siteId) ?? null;
      if (live) return { saved, session: { ...live, key: String(saved.id), alias: saved.alias }, problem: null };
      return {
        saved,
        session: ledgerOnlySession(saved, site),
        problem: saved.state === "ok" ? null : saved.stateMessage,
      };
    }),
  );
}

/** The workspace's accounts as the dashboard lists them, the active one marked. */
export async function listWorkspace(
  db: Db,
  accounts: SavedAccounts,
  workspaceId: number,
  activeId: number | null,
): Promise<ListedAccount[]> {
  const scope = await storedScope(db, accounts, workspaceId);
  const active = scope.some((s) => s.saved.id === activeId) ? activeId : (scope[0]?.saved.id ?? null);
  return scope.map((s) => listedSaved(s, s.saved.id === active));
}

/**
 * What the ledger tells a workspace's rows (the api layer hands it down): the last balance a sync
 * noted, and the summary as the last sync left it while that is fresh (null when it is not).
 */
export type LedgerViews = RowLedger & {
  /** The fresh stored summaries of these sessions' accounts, by session. */
  stored: (sessions: LiveSession[], tz: string) => Promise<Map<LiveSession, Summary>>;
  /** The accounts no sync has completed for yet, with the balance their site gave when it accepted the token. */
  awaiting: (sessions: LiveSession[]) => Promise<Map<LiveSession, Known>>;
};

type Known = NonNullable<AccountRow["lastKnown"]>;

/** What the ledger's views hand a workspace's rows in one read: fresh summaries, and accounts awaiting a first sync. */
type LedgerRows = { stored: Map<LiveSession, Summary>; awaiting: Map<LiveSession, Known> };

async function ledgerRows(ledger: LedgerViews, sessions: LiveSession[], tz: string): Promise<LedgerRows> {
  const [stored, awaiting] = await Promise.all([ledger.stored(sessions, tz), ledger.awaiting(sessions)]);
  return { stored, awaiting };
}

/**
 * An account's row from the ledger alone: as its last sync left it while that is fresh, else
 * before its first sync the balance its site gave when it accepted the token; undefined when the
 * ledger has neither (the site is asked).
 */
async function rowFromLedger(
  listedRow: ReturnType<typeof listedSaved>,
  session: LiveSession,
  views: LedgerRows,
  ledger: RowLedger,
): Promise<AccountRow | undefined> {
  const summary = views.stored.get(session);
  if (summary) return withDaysLeft({ ...listedRow, ...okRow(summary) }, session, ledger);
  const known = views.awaiting.get(session);
  if (known)
    return { ...listedRow, state: "syncing", message: MSG.firstSync, summary: null, daysLeft: null, lastKnown: known };
  return undefined;
}

/**
 * One saved account's row: as its last sync left it while that is fresh (the job runner keeps it
 * so; no site is asked), else its live summary, or why there is none and the last balance the
 * ledger knew. 刷新 (`deps.refresh`) always reads the site.
 */
async function savedRow(
  s: ScopedAccount,
  tz: string,
  deps: SiteDataDeps,
  ledger: LedgerViews,
  active: boolean,
): Promise<AccountRow> {
  const listedRow = listedSaved(s, active);
  if (s.problem === null) {
    const stored = deps.refresh === true ? undefined : (await ledger.stored([s.session], tz)).get(s.session);
    if (stored) return withDaysLeft({ ...listedRow, ...okRow(stored) }, s.session, ledger);
    return { ...listedRow, ...(await rowOf(s.session, tz, deps, ledger)) };
  }
  const last = await ledger.lastBalance(s.session);
  return {
    ...listedRow,
    state: s.saved.state === "reauth" ? "refused" : "unreachable",
    message: s.problem,
    summary: null,
    daysLeft: null,
    lastKnown: last ? { balance: { quota: last.quota, usd: last.usd }, at: last.at } : null,
  };
}

/** Every saved account's row (sessions renewed where they end soon) and the totals of those not left out. */
export async function workspaceOverview(
  db: Db,
  accounts: SavedAccounts,
  workspaceId: number,
  activeId: number | null,
  tz: string,
  deps: SiteDataDeps,
  ledger: LedgerViews,
) {
  const sites = await siteIndex(db);
  const list = await accounts.list(workspaceId, sites);
  const active = list.some((a) => a.id === activeId) ? activeId : (list[0]?.id ?? null);
  const scope = await Promise.all(list.map((saved: SavedAccount) => scoped(accounts, saved, sites)));
  // The rows the ledger holds fresh come in one read; the others ask their sites side by side.
  const usable = scope.filter((x) => x.problem === null).map((x) => x.session);
  const views: LedgerRows =
    deps.refresh === true ? { stored: new Map(), awaiting: new Map() } : await ledgerRows(ledger, usable, tz);
  const none: LedgerViews = { ...ledger, stored: () => Promise.resolve(new Map()) };
  const rows = await Promise.all(
    scope.map(async (x) => {
      const fromLedger =
        x.problem === null
          ? await rowFromLedger(listedSaved(x, x.saved.id === active), x.session, views, ledger)
          : undefined;
      return fromLedger ?? savedRow(x, tz, deps, none, x.saved.id === active);
    }),
  );
  return { rows, totals: overviewTotals(rows.filter((r) => !r.saved?.excluded)) };
}

/**
 * The rows of the workspace's accounts that the ledger holds fresh, and of those waiting for
 * their first sync (the balance their verification read), from stored data only (no site is
 * asked, no session renewed): the dashboard shows these at once and asks only for the rest.
 */
export async function storedRows(
  db: Db,
  accounts: SavedAccounts,
  workspaceId: number,
  tz: string,
  ledger: LedgerViews,
): Promise<Array<{ key: string; row: AccountRow }>> {
  const scope = (await storedScope(db, accounts, workspaceId)).filter((x) => x.problem === null);
  const views = await ledgerRows(
    ledger,
    scope.map((x) => x.session),
    tz,
  );
  const rows = await Promise.all(
    scope.map(async (x) => {
      const row = await rowFromLedger(listedSaved(x, false), x.session, views, ledger);
      return row ? [{ key: String(x.saved.id), row }] : [];
    }),
  );
  return rows.flat();
}

/** A saved account's row by id, for the dashboard filling rows in as each site answers. */
export async function workspaceRow(
  db: Db,
  accounts: SavedAccounts,
  workspaceId: number,
  id: number,
  tz: string,
  deps: SiteDataDeps,
  ledger: LedgerViews,
  active: boolean,
): Promise<AccountRow> {
  const sites = await siteIndex(db);
  const saved = await accounts.get(workspaceId, id, sites);
  return savedRow(await scoped(accounts, saved, sites), tz, deps, ledger, active);
}
