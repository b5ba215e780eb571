/**
 * The operator's cookie: the session token itself (only its hash is stored), `HttpOnly`,
 * `SameSite=Strict`, 8 hours; over HTTPS `Secure` with the `__Host-` prefix, and only that name is
 * read. A name sent twice counts as no cookie. Apart from the accounts' cookie: neither is read
 * in place of the other.
 */
import { tokenCookie } from "../net/token-cookie";
import { OPERATOR_SESSION_MS } from "./operator";

const cookie = tokenCookie("gd_admin", "Strict", OPERATOR_SESSION_MS / 1000);

export function setOperatorCookie(resHeaders: Headers, token: string, secure: boolean): void {
  cookie.set(resHeaders, token, secure);
}

export function clearOperatorCookie(resHeaders: Headers, secure: boolean): void {
  cookie.clear(resHeaders, secure);
}

/** The token of the operator's cookie, if the request carries exactly one. */
export function operatorTokenFromCookie(cookieHeader: string | null, secure: boolean): string | null {
  return cookie.read(cookieHeader, secure);
}
