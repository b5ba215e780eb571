import type { Db } from "../db/client";
import { hasSessionCookie, tokenFromCookie } from "./cookie";
import { sessionStore, type LiveSession } from "./store";

/** How a request names its session, and the live session it names (null: unknown, expired, malformed). */
export type RequestSession = { via: "bearer" | "cookie"; session: LiveSession | null };

function bearerToken(headers: Headers): string | undefined {
  const authorization = headers.get("authorization");
  return authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
}

/**
 * The session of a request: its Bearer token when it sends one, else its session cookie (over
 * HTTPS only the `__Host-` one). null when the request names no session at all.
 */
export async function resolveSession(db: Db, headers: Headers, secure: boolean): Promise<RequestSession | null> {
  const bearer = bearerToken(headers);
  if (bearer) return { via: "bearer", session: await sessionStore(db).findValid(bearer) };
  const cookieHeader = headers.get("cookie");
  if (!hasSessionCookie(cookieHeader, secure)) return null;
  const token = await tokenFromCookie(cookieHeader, secure);
  return { via: "cookie", session: token ? await sessionStore(db).findValid(token) : null };
}
