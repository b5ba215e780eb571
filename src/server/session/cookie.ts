import { seal, unseal } from "./keys";

/**
 * The browser carries its session token in an iron-session sealed cookie. Over HTTPS the cookie
 * is `Secure` with the `__Host-` prefix; over plain http (self-hosted on http://ip:port) a Secure
 * cookie would be dropped, so it is sent without.
 */
const PLAIN_NAME = "gd_session";
const SECURE_NAME = "__Host-gd_session";

type CookieData = { token: string };

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

/** The value of a cookie in a Cookie header, or undefined. */
export function readCookie(cookieHeader: string | null, name: string): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Seal → token, for cookies seen recently: unsealing costs more than the rest of a request. */
const unsealed = new Map<string, string>();
const UNSEALED_MAX = 10_000;

export async function tokenFromCookie(cookieHeader: string | null): Promise<string | undefined> {
  const sealed = readCookie(cookieHeader, SECURE_NAME) ?? readCookie(cookieHeader, PLAIN_NAME);
  if (!sealed) return undefined;
  const known = unsealed.get(sealed);
  if (known !== undefined) return known;
  // The cookie's own Max-Age ends it in the browser; the store's expires_at is what is enforced.
  const data = await unseal<CookieData>(sealed, 0);
  const token = typeof data?.token === "string" ? data.token : undefined;
  if (token === undefined) return undefined;
  if (unsealed.size >= UNSEALED_MAX) unsealed.clear();
  unsealed.set(sealed, token);
  return token;
}

/** Forgets cached unseals, e.g. after the password set changes (tests rotate passwords). */
export function forgetUnsealedCookies(): void {
  unsealed.clear();
}
