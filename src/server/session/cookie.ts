import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { seal, sealedWithKnownPassword, unseal } from "./seal";

/**
 * The browser carries its session in an iron-session sealed cookie. Over HTTPS the cookie is
 * `Secure` with the `__Host-` prefix and only that name is read (a plain one could have been
 * planted by a sibling subdomain or a man in the middle on plain http); over plain http
 * (self-hosted on http://ip:port) a Secure cookie would be dropped, so it is sent without.
 */
const PLAIN_NAME = "gd_session";
const SECURE_NAME = "__Host-gd_session";

type CookieData = { token: string };

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

export async function setSessionCookie(
  resHeaders: Headers,
  token: string,
  expiresAt: Date,
  secure: boolean,
): Promise<void> {
  const maxAge = Math.max(1, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  const sealed = await seal({ token } satisfies CookieData, maxAge);
  resHeaders.append("Set-Cookie", serialize(cookieName(secure), sealed, maxAge, secure));
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
const unsealed = new LRUCache<string, string>({
  maxSize: 4 * 1024 * 1024,
  sizeCalculation: (token, key) => token.length + key.length + 64,
});

function cacheKey(sealed: string): string {
  return createHash("sha256").update(sealed).digest("base64url");
}

/** The session token a request's cookie carries, or undefined for no, several or a malformed cookie. */
export async function tokenFromCookie(cookieHeader: string | null, secure: boolean): Promise<string | undefined> {
  const sealed = readCookie(cookieHeader, cookieName(secure));
  if (!sealed || sealed.length > MAX_COOKIE_CHARS || !SEAL_SHAPE.test(sealed)) return undefined;
  // A cached unseal stays valid only while its password is configured.
  if (!sealedWithKnownPassword(sealed)) return undefined;
  const key = cacheKey(sealed);
  const known = unsealed.get(key);
  if (known !== undefined) return known;
  // The cookie's own Max-Age ends it in the browser; the store's expires_at is what is enforced.
  const data = await unseal<CookieData>(sealed, 0);
  const token = typeof data?.token === "string" ? data.token : undefined;
  if (token !== undefined) unsealed.set(key, token);
  return token;
}

/** Whether the Cookie header names the session cookie at all (then a refusal clears it). */
export function hasSessionCookie(cookieHeader: string | null, secure: boolean): boolean {
  const name = cookieName(secure);
  return (cookieHeader ?? "").split(";").some((part) => part.split("=")[0]?.trim() === name);
}
