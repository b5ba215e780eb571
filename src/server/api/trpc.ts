/**
 * tRPC glue: one initTRPC, the procedures every router builds on.
 * https://trpc.io/docs/server/procedures
 */
import { TRPCError, initTRPC } from "@trpc/server";
import { isDatabaseUnavailable } from "../db/errors";
import { MSG } from "../messages";
import { clearSessionCookie, tokenFromCookie } from "../session/cookie";
import { sessionStore } from "../session/store";
import type { Context } from "./context";

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    // Internal errors may carry SQL or paths; clients only ever see a fixed sentence.
    if (error.code === "INTERNAL_SERVER_ERROR") {
      return { ...shape, message: MSG.internal, data: { ...shape.data, stack: undefined } };
    }
    return { ...shape, data: { ...shape.data, stack: undefined } };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
/** A store that cannot be reached is a 503 with a plain message, not a 500 or a hang. */
export const publicProcedure = t.procedure.use(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.code === "INTERNAL_SERVER_ERROR" && isDatabaseUnavailable(result.error.cause)) {
    throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: MSG.dbUnavailable, cause: result.error.cause });
  }
  return result;
});

/** Bearer token when present, else the sealed cookie's token. */
async function sessionToken(headers: Headers): Promise<{ token: string; via: "bearer" | "cookie" } | null> {
  const authorization = headers.get("authorization");
  const bearer = authorization ? /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] : undefined;
  if (bearer) return { token: bearer, via: "bearer" };
  const fromCookie = await tokenFromCookie(headers.get("cookie"));
  return fromCookie ? { token: fromCookie, via: "cookie" } : null;
}

/** Served over HTTPS: the session cookie is then `Secure` with the `__Host-` prefix. */
export function isSecure(ctx: Context): boolean {
  return ctx.origin.startsWith("https:");
}

/** Requires a live session; rejects cross-origin cookie-authenticated mutations (CSRF). */
export const authedProcedure = publicProcedure.use(async ({ ctx, type, next }) => {
  const found = await sessionToken(ctx.headers);
  if (found?.via === "cookie" && type === "mutation") {
    const origin = ctx.headers.get("origin");
    if (origin !== null && origin !== ctx.origin) {
      throw new TRPCError({ code: "FORBIDDEN", message: MSG.badOrigin });
    }
  }
  const session = found ? await sessionStore(ctx.db).findValid(found.token) : null;
  if (!session) {
    if (found?.via === "cookie") clearSessionCookie(ctx.resHeaders, isSecure(ctx));
    throw new TRPCError({ code: "UNAUTHORIZED", message: MSG.unauthenticated });
  }
  ctx.resHeaders.set("Cache-Control", "no-store");
  return next({ ctx: { session, secure: isSecure(ctx) } });
});
