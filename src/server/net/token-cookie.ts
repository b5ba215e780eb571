/**
 * A cookie that carries a session token itself (only its hash is stored): `HttpOnly`, `Path=/`;
 * over HTTPS `Secure` with the `__Host-` prefix, and only that name is read. A name sent twice
 * counts as no cookie (which one is ours cannot be told).
 */
export function tokenCookie(baseName: string, sameSite: "Strict" | "Lax", maxAgeSeconds: number) {
  const nameFor = (secure: boolean) => (secure ? `__Host-${baseName}` : baseName);
  const attributes = (maxAge: number, secure: boolean) =>
    ["Path=/", "HttpOnly", `SameSite=${sameSite}`, `Max-Age=${maxAge}`, ...(secure ? ["Secure"] : [])].join("; ");
  return {
    set(resHeaders: Headers, token: string, secure: boolean): void {
      resHeaders.append("Set-Cookie", `${nameFor(secure)}=${token}; ${attributes(maxAgeSeconds, secure)}`);
    },
    clear(resHeaders: Headers, secure: boolean): void {
      resHeaders.append("Set-Cookie", `${nameFor(secure)}=; ${attributes(0, secure)}`);
    },
    /** The token, if the request carries exactly one such cookie. */
    read(cookieHeader: string | null, secure: boolean): string | null {
      if (!cookieHeader) return null;
      const name = nameFor(secure);
      const values = cookieHeader
        .split(";")
        .map((part) => part.trim())
        .filter((part) => part.startsWith(`${name}=`))
        .map((part) => part.slice(name.length + 1));
      return values.length === 1 && values[0] ? values[0] : null;
    },
  };
}
