import type { Db } from "../db/client";
import { browserAccountKey, activeAccount } from "./browser";
import { accountsFromCookie, hasSessionCookie, type BrowserAccounts } from "./cookie";
import { hashToken, sessionStore, type LiveSession } from "./store";

/**
 * How a request names its session, and the live session it names (null: unknown, expired,
 * malformed). A cookie also brings the browser's accounts; `changed` when some dropped out on
 * this request (the cookie is then written again).
 */
export type RequestSession =
  | { via: "bearer"; session: LiveSession | null }
  | { via: "cookie"; session: LiveSession | null; browser: BrowserAccounts; changed: boolean };

function bearerToken(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  return authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
}

/**
 * The session of a request: its Bearer token when it sends one, else one account of its session
 * cookie (over HTTPS only the `__Host-` cookie): the one `named` (the key a page was rendered for,
 * docs/design.md 24; null when that account is no longer in the browser), or the cookie's active one.
 * null when the request names no session at all.
 */
export async function resolveSession(
  db: Db,
  headers: Headers,
  secure: boolean,
  named: string | null = null,
): Promise<RequestSession | null> {
  const bearer = bearerToken(headers);
  if (bearer) return { via: "bearer", session: await sessionStore(db).findValid(bearer) };
  const cookieHeader = headers.get("cookie");
  if (!hasSessionCookie(cookieHeader, secure)) return null;
  const accounts = await accountsFromCookie(cookieHeader, secure);
  if (!accounts) return { via: "cookie", session: null, browser: { a: [], d: [] }, changed: false };
  if (named !== null) {
    const entry = accounts.a.find((x) => browserAccountKey(hashToken(x.t)) === named);
    const session = entry ? await sessionStore(db).findValid(entry.t) : null;
    return { via: "cookie", session, browser: accounts, changed: false };
  }
  const active = await activeAccount(db, accounts);
  return { via: "cookie", session: active.session, browser: active.accounts, changed: active.changed };
}

/** The accounts a request's cookie carries (whatever their sessions' state), for sign-in. */
export function browserAccounts(headers: Headers, secure: boolean): Promise<BrowserAccounts | undefined> {
  return accountsFromCookie(headers.get("cookie"), secure);
}
