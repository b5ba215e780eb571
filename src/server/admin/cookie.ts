/**
 * The operator's cookie: the session token itself (only its hash is stored), `HttpOnly`,
 * `SameSite=Strict`, 8 hours; over HTTPS `Secure` with the `__Host-` prefix, and only that name is
 * read. A name sent twice counts as no cookie. Apart from the accounts' cookie: neither is read
 * in place of the other.
 */
import { OPERATOR_SESSION_MS } from "./operator";

const PLAIN_NAME = "gd_admin";
const SECURE_NAME = "__Host-gd_admin";

const nameFor = (secure: boolean) => (secure ? SECURE_NAME : PLAIN_NAME);

export function setOperatorCookie(resHeaders: Headers, token: string, secure: boolean): void {
  const attributes = ["Path=/", "HttpOnly", "SameSite=Strict", `Max-Age=${OPERATOR_SESSION_MS / 1000}`];
  if (secure) attributes.push("Secure");
  resHeaders.append("Set-Cookie", `${nameFor(secure)}=${token}; ${attributes.join("; ")}`);
}

export function clearOperatorCookie(resHeaders: Headers, secure: boolean): void {
  resHeaders.append(
    "Set-Cookie",
    `${nameFor(secure)}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? "; Secure" : ""}`,
  );
}

/** The token of the operator's cookie, if the request carries exactly one. */
export function operatorTokenFromCookie(cookieHeader: string | null, secure: boolean): string | null {
  if (!cookieHeader) return null;
  const name = nameFor(secure);
  const values = cookieHeader
    .split(";")
    .map((part) => part.trim())
    .filter((part) => part.startsWith(`${name}=`))
    .map((part) => part.slice(name.length + 1));
  return values.length === 1 && values[0] ? values[0] : null;
}
