import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { processState, type StatePart } from "../core/process-state";
import { seal, sealedWithKnownPassword, unseal } from "./seal";

/**
 * The browser carries its session in an iron-session sealed cookie. Over HTTPS the cookie is
 * `Secure` with the `__Host-` prefix and only that name is read (a plain one could have been
 * planted by a sibling subdomain or a man in the middle on plain http); over plain http
 * (self-hosted on http://ip:port) a Secure cookie would be dropped, so it is sent without.
 */
const PLAIN_NAME = "gd_session";
const SECURE_NAME = "__Host-gd_session";

/** One account in the browser: its session token, and whose it is (site id, site user id). */
export type BrowserAccount = { t: string; s: number; u: number };

/**
 * What the cookie holds: the browser's accounts, most recently used first (the first is active),
 * and the accounts that dropped out since the browser was last told (site id, site user id).
 */
export type BrowserAccounts = { a: BrowserAccount[]; d: { s: number; u: number }[] };

/** Accounts one browser may hold; at 20 the sealed cookie stays well under 4 KB. */
export const MAX_BROWSER_ACCOUNTS = 20;
/** The browser keeps the cookie as long as a session can live; the store's expires_at is enforced. */
const COOKIE_MAX_AGE_SECONDS = 24 * 60 * 60;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const isId = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;

/** The accounts of an unsealed cookie; a cookie of one session (`{token}`) is one account. */
function accountsOf(data: Record<string, unknown> | null): BrowserAccounts | undefined {
  if (!data) return undefined;
  if (typeof data.token === "string" && UUID.test(data.token)) return { a: [{ t: data.token, s: 0, u: 0 }], d: [] };
  if (!Array.isArray(data.a)) return undefined;
  const a = (data.a as unknown[])
    .filter(
      (x): x is BrowserAccount =>
        typeof x === "object" &&
        x !== null &&
        typeof (x as BrowserAccount).t === "string" &&
        UUID.test((x as BrowserAccount).t) &&
        isId((x as BrowserAccount).s) &&
        isId((x as BrowserAccount).u),
    )
    .slice(0, MAX_BROWSER_ACCOUNTS);
  const d = Array.isArray(data.d)
    ? (data.d as unknown[])
        .filter(
          (x): x is { s: number; u: number } =>
            typeof x === "object" && x !== null && isId((x as BrowserAccount).s) && isId((x as BrowserAccount).u),
        )
        .slice(0, MAX_BROWSER_ACCOUNTS)
    : [];
  return a.length > 0 || d.length > 0 ? { a, d } : undefined;
}

/**
 * Exactly the shape of a seal this service writes (iron's eight fields, then `~2`), and no longer
 * than a cookie can be. iron-session itself ignores anything after `~2`; such a value is refused
 * here before any crypto or cache.
 */
const SEAL_SHAPE =
  /^Fe26\.2\*\d{1,16}\*[0-9a-f]{64}\*[A-Za-z0-9_-]{22}\*[A-Za-z0-9_-]{22,3000}\*\d{0,16}\*[0-9a-f]{64}\*[A-Za-z0-9_-]{43}~2$/;
const MAX_COOKIE_CHARS = 3_800;

function cookieName(secure: boolean): string {
  return secure ? SECURE_NAME : PLAIN_NAME;
}

function serialize(name: string, value: string, maxAgeSeconds: number, secure: boolean): string {
  const parts = [`${name}=${value}`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`];
  if (maxAgeSeconds === 0) parts.push("Expires=Thu, 01 Jan 1970 00:00:00 GMT");
  if (secure) parts.push("Secure");
  return parts.join("; ");
}

/** Writes the browser's accounts; with none left, clears the cookie. */
export async function setBrowserAccounts(resHeaders: Headers, accounts: BrowserAccounts, secure: boolean) {
  if (accounts.a.length === 0) {
    clearSessionCookie(resHeaders, secure);
    return;
  }
  const trimmed = { a: accounts.a.slice(0, MAX_BROWSER_ACCOUNTS), d: accounts.d.slice(-MAX_BROWSER_ACCOUNTS) };
  const sealed = await seal(trimmed, COOKIE_MAX_AGE_SECONDS);
  resHeaders.append("Set-Cookie", serialize(cookieName(secure), sealed, COOKIE_MAX_AGE_SECONDS, secure));
}

export function clearSessionCookie(resHeaders: Headers, secure: boolean): void {
  resHeaders.append("Set-Cookie", serialize(cookieName(secure), "", 0, secure));
}

/**
 * The one value of a cookie in a Cookie header; undefined when it is absent, and also when the
 * name appears more than once (a browser sends every cookie that matches: which one is ours
 * cannot be told from the order).
 */
function readCookie(cookieHeader: string | null, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  let found: string | undefined;
  let count = 0;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    found = part.slice(eq + 1).trim();
    count++;
  }
  return count === 1 ? found : undefined;
}

/**
 * Unsealed cookies seen recently (unsealing costs more than the rest of a request), keyed by the
 * SHA-256 of the seal and bounded by bytes, least recently used first out.
 */
const UNSEALED: StatePart<LRUCache<string, BrowserAccounts>> = {
  name: "unsealed-cookies",
  create: () =>
    new LRUCache<string, BrowserAccounts>({
      maxSize: 4 * 1024 * 1024,
      sizeCalculation: (accounts, key) => key.length + 64 + (accounts.a.length + accounts.d.length) * 120,
    }),
};

function cacheKey(sealed: string): string {
  return createHash("sha256").update(sealed).digest("base64url");
}

/** The accounts a request's cookie carries, or undefined for no, several or a malformed cookie. */
export async function accountsFromCookie(
  cookieHeader: string | null,
  secure: boolean,
): Promise<BrowserAccounts | undefined> {
  const sealed = readCookie(cookieHeader, cookieName(secure));
  if (!sealed || sealed.length > MAX_COOKIE_CHARS || !SEAL_SHAPE.test(sealed)) return undefined;
  // A cached unseal stays valid only while its password is configured.
  if (!sealedWithKnownPassword(sealed)) return undefined;
  const key = cacheKey(sealed);
  const unsealed = processState().get(UNSEALED);
  const known = unsealed.get(key);
  if (known !== undefined) return known;
  // The cookie's own Max-Age ends it in the browser; the store's expires_at is what is enforced.
  const accounts = accountsOf(await unseal<Record<string, unknown>>(sealed, 0));
  if (accounts !== undefined) unsealed.set(key, accounts);
  return accounts;
}

/** Whether the Cookie header names the session cookie at all (then a refusal clears it). */
export function hasSessionCookie(cookieHeader: string | null, secure: boolean): boolean {
  const name = cookieName(secure);
  return (cookieHeader ?? "").split(";").some((part) => part.split("=")[0]?.trim() === name);
}
