/**
 * Several accounts in one browser (docs/design.md 11): the cookie lists up to 20 live sessions, most
 * recently used first; the first is the active account. These functions return new lists (the
 * cookie's unsealed value is shared through a cache and never changed in place).
 */
import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import { MAX_BROWSER_ACCOUNTS, type BrowserAccount, type BrowserAccounts } from "./cookie";
import { hashToken, sessionStore, type LiveSession } from "./store";

/** An opaque key naming an account of this browser: derived from its session id, never a token. */
export function browserAccountKey(sessionId: string): string {
  return createHash("sha256").update(`gd-account:${sessionId}`).digest("base64url").slice(0, 22);
}

const sameAccount = (x: { s: number; u: number }, y: { s: number; u: number }) => x.s === y.s && x.u === y.u;

/** The browser's accounts after a dead one dropped out, with a note of whose it was. */
function dropped(accounts: BrowserAccounts, dead: BrowserAccount): BrowserAccounts {
  const note = dead.s === 0 && dead.u === 0 ? [] : [{ s: dead.s, u: dead.u }];
  return { a: accounts.a.filter((x) => x.t !== dead.t), d: [...accounts.d, ...note] };
}

/**
 * The active account of a browser: the first whose session lives. Dead ones before it drop out,
 * noted, so that the next most recently used account becomes active.
 */
export async function activeAccount(
  db: Db,
  accounts: BrowserAccounts,
): Promise<{ session: LiveSession | null; accounts: BrowserAccounts; changed: boolean }> {
  let current = accounts;
  let changed = false;
  for (;;) {
    const first = current.a[0];
    if (!first) return { session: null, accounts: current, changed };
    const session = await sessionStore(db).findValid(first.t);
    if (session) {
      // A cookie of one session from before accounts were listed: learn whose it is.
      if (first.s !== session.siteId || first.u !== session.siteUserId) {
        const named = { t: first.t, s: session.siteId, u: session.siteUserId };
        current = { a: [named, ...current.a.slice(1)], d: current.d };
        changed = true;
      }
      return { session, accounts: current, changed };
    }
    current = dropped(current, first);
    changed = true;
  }
}

/** Every account of the browser with its live session; dead ones drop out, noted. */
export async function liveAccounts(
  db: Db,
  accounts: BrowserAccounts,
): Promise<{ live: { entry: BrowserAccount; session: LiveSession }[]; accounts: BrowserAccounts; changed: boolean }> {
  const store = sessionStore(db);
  const sessions = await Promise.all(accounts.a.map((entry) => store.findValid(entry.t)));
  const live: { entry: BrowserAccount; session: LiveSession }[] = [];
  let notes = accounts.d;
  accounts.a.forEach((entry, i) => {
    const session = sessions[i];
    if (session) live.push({ entry: { t: entry.t, s: session.siteId, u: session.siteUserId }, session });
    else notes = dropped({ a: [], d: notes }, entry).d;
  });
  const changed =
    live.length !== accounts.a.length || live.some((x, i) => !sameAccount(x.entry, accounts.a[i] ?? { s: -1, u: -1 }));
  return { live, accounts: { a: live.map((x) => x.entry), d: notes }, changed };
}

/**
 * The browser's accounts after a sign-in: the new session first (active). An older session of
 * the same account is ended and replaced; past the limit the least recently used are ended.
 */
export async function withSignedIn(
  db: Db,
  accounts: BrowserAccounts | undefined,
  entry: BrowserAccount,
): Promise<BrowserAccounts> {
  const before = accounts ?? { a: [], d: [] };
  const replaced = before.a.filter((x) => sameAccount(x, entry) || x.t === entry.t);
  const kept = before.a.filter((x) => !replaced.includes(x));
  const list = [entry, ...kept];
  const evicted = list.slice(MAX_BROWSER_ACCOUNTS);
  const store = sessionStore(db);
  for (const old of [...replaced.filter((x) => x.t !== entry.t), ...evicted]) await store.remove(hashToken(old.t));
  return { a: list.slice(0, MAX_BROWSER_ACCOUNTS), d: before.d.filter((x) => !sameAccount(x, entry)) };
}

/** The browser's accounts without one session (signed out or ended). */
export function without(accounts: BrowserAccounts, sessionId: string): BrowserAccounts {
  return { a: accounts.a.filter((x) => hashToken(x.t) !== sessionId), d: accounts.d };
}

/** The browser's accounts with the one named by `sessionId` moved first (active). */
export function activated(accounts: BrowserAccounts, sessionId: string): BrowserAccounts {
  const chosen = accounts.a.find((x) => hashToken(x.t) === sessionId);
  if (!chosen) return accounts;
  return { a: [chosen, ...accounts.a.filter((x) => x !== chosen)], d: accounts.d };
}
