/**
 * The accounts of one browser as the dashboard lists them, and the changes it can make: switch
 * the active one, sign one out, sign all out (docs/design.md 11). Keys are opaque and not tokens.
 */
import { Refusal } from "../core/errors";
import type { DroppedAccount, ListedAccount } from "./schemas";
import type { Db } from "../db/client";
import { browserAccountKey, activated, liveAccounts, without } from "../session/browser";
import type { BrowserAccounts } from "../session/cookie";
import { hashToken, sessionStore, type LiveSession } from "../session/store";
import { siteRegistry } from "../sites/registry";

/** An account key this browser does not hold. */
export class AccountError extends Refusal {
  constructor(message: string) {
    super(message, "NOT_FOUND");
  }
}

export type { ListedAccount } from "./schemas";

const text = (info: Record<string, unknown>, key: string) => (typeof info[key] === "string" ? info[key] : "");

export function listed(session: LiveSession, active: boolean): ListedAccount {
  const info = JSON.parse(session.userInfo) as Record<string, unknown>;
  return {
    key: browserAccountKey(session.id),
    active,
    site: session.site,
    userId: session.siteUserId,
    username: text(info, "username"),
    displayName: text(info, "display_name"),
    expiresAt: session.expiresAt.toISOString(),
  };
}

/**
 * Every live account of the browser, the active first; accounts that dropped out since the
 * browser was last told are reported once (their notes leave the cookie).
 */
export async function listAccounts(db: Db, browser: BrowserAccounts) {
  const { live, accounts } = await liveAccounts(db, browser);
  const names = new Map((await siteRegistry(db).list()).map((s) => [s.id, s.name]));
  const dropped: DroppedAccount[] = accounts.d.map((d) => ({
    siteId: d.s,
    siteName: names.get(d.s) ?? null,
    userId: d.u,
  }));
  return {
    accounts: live.map((x, i) => listed(x.session, i === 0)),
    sessions: live.map((x) => x.session),
    dropped,
    cookie: { a: accounts.a, d: [] } satisfies BrowserAccounts,
  };
}

/** The live account of this browser a key names; an error when it names none (another browser's, or ended). */
async function find(db: Db, browser: BrowserAccounts, key: string) {
  const { live } = await liveAccounts(db, browser);
  const found = live.find((x) => browserAccountKey(x.session.id) === key);
  if (!found) throw new AccountError("账户不存在或已退出，请刷新后重试");
  return found;
}

export async function switchAccount(db: Db, browser: BrowserAccounts, key: string): Promise<BrowserAccounts> {
  const found = await find(db, browser, key);
  return activated(browser, found.session.id);
}

export async function signOutAccount(db: Db, browser: BrowserAccounts, key: string): Promise<BrowserAccounts> {
  const found = await find(db, browser, key);
  await sessionStore(db).remove(found.session.id);
  return without(browser, found.session.id);
}

/** Ends every session of the browser; returns how many. */
export async function signOutAll(db: Db, browser: BrowserAccounts): Promise<number> {
  const store = sessionStore(db);
  const { live } = await liveAccounts(db, browser);
  for (const x of live) await store.remove(x.session.id);
  return live.length;
}

/** Whose the key is: this browser's account (its session, null once ended), or undefined for none of its. */
export async function sessionByKey(
  db: Db,
  browser: BrowserAccounts | null,
  own: LiveSession,
  key: string,
): Promise<LiveSession | null | undefined> {
  if (!browser) return browserAccountKey(own.id) === key ? own : undefined;
  const entry = browser.a.find((x) => browserAccountKey(hashToken(x.t)) === key);
  if (!entry) return undefined;
  return sessionStore(db).findValid(entry.t);
}
