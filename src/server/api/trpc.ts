/**
 * tRPC glue: one initTRPC, the procedures every router builds on.
 * https://trpc.io/docs/server/procedures
 */
import { TRPCError, initTRPC } from "@trpc/server";
import { ZodError } from "zod";
import { Refusal } from "../core/errors";
import { MSG } from "../core/messages";
import { isDatabaseUnavailable } from "../db/errors";
import { clearOperatorCookie, operatorTokenFromCookie } from "../admin/cookie";
import { operatorSession } from "../admin/operator";
import { isForeignRequest } from "../net/origin";
import { clearSessionCookie, setBrowserAccounts } from "../session/cookie";
import { resolveSession } from "../session/request";
import type { Context } from "./context";
import { badParamMessage } from "./schemas/params";

/** Calls one batched request may carry (the dashboard's client batches up to this many). */
export const MAX_BATCH_SIZE = 10;

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    // Internal errors may carry SQL or paths; clients only ever see a fixed sentence.
    if (error.code === "INTERNAL_SERVER_ERROR") {
      return { ...shape, message: MSG.internal, data: { ...shape.data, stack: undefined } };
    }
    if (error.code === "BAD_REQUEST" && error.message === "Batch call exceeds maximum size") {
      return {
        ...shape,
        message: `${MSG.batchTooLarge}（最多 ${MAX_BATCH_SIZE} 个）`,
        data: { ...shape.data, stack: undefined },
      };
    }
    return { ...shape, data: { ...shape.data, stack: undefined } };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * The one error map, around every procedure (its input check included):
 * - a parameter that fails its schema is BAD_REQUEST `请求参数无效: <参数>` (REST answers it as
 *   HTTP 200 `success:false`, docs/api.md);
 * - a Refusal thrown by domain code is its code and message (and `Retry-After` when it has one);
 * - a store that cannot be reached is a 503 with a plain message, not a 500 or a hang.
 * Everything else stays a fault: INTERNAL_SERVER_ERROR, answered with a fixed sentence.
 */
export const publicProcedure = t.procedure.use(async ({ ctx, next }) => {
  const result = await next();
  if (result.ok) return result;
  const { error } = result;
  const cause = error.cause;
  if (error.code === "BAD_REQUEST" && cause instanceof ZodError) {
    throw new TRPCError({ code: "BAD_REQUEST", message: badParamMessage(cause), cause });
  }
  if (error.code !== "INTERNAL_SERVER_ERROR") return result;
  if (cause instanceof Refusal) {
    if (cause.retryAfterSeconds !== undefined) ctx.resHeaders.set("Retry-After", String(cause.retryAfterSeconds));
    throw new TRPCError({ code: cause.code, message: cause.message, cause });
  }
  if (isDatabaseUnavailable(cause))
    throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: MSG.dbUnavailable, cause });
  return result;
});

function refuseForeign(ctx: Context): void {
  if (isForeignRequest(ctx.headers, ctx.origin)) throw new TRPCError({ code: "FORBIDDEN", message: MSG.badOrigin });
}

/** Sign-in: a page elsewhere must not sign a visitor into someone else's account (login CSRF). */
export const signInProcedure = publicProcedure.use(({ ctx, next }) => {
  refuseForeign(ctx);
  return next();
});

/**
 * Requires a live session (Bearer, or the cookie's active account); refuses cross-site
 * cookie-authenticated mutations (CSRF). `browser` is the cookie's accounts (null with Bearer).
 */
export const authedProcedure = publicProcedure.use(async ({ ctx, type, next }) => {
  const found = await resolveSession(ctx.db, ctx.headers, ctx.secure);
  if (found?.via === "cookie" && type === "mutation") refuseForeign(ctx);
  if (!found?.session) {
    if (found?.via === "cookie") clearSessionCookie(ctx.resHeaders, ctx.secure);
    throw new TRPCError({ code: "UNAUTHORIZED", message: MSG.unauthenticated });
  }
  ctx.resHeaders.set("Cache-Control", "no-store");
  // Accounts whose sessions ended elsewhere dropped out on the way to the active one.
  if (found.via === "cookie" && found.changed) await setBrowserAccounts(ctx.resHeaders, found.browser, ctx.secure);
  return next({ ctx: { session: found.session, browser: found.via === "cookie" ? found.browser : null } });
});

/**
 * Requires a live operator session (design.md 15): `Authorization: Bearer` with an operator
 * token, or the operator's cookie; cross-site cookie-authenticated mutations are refused. A
 * gateway account's session is no operator session (its token is not in that table).
 */
export const operatorProcedure = publicProcedure.use(async ({ ctx, type, next }) => {
  const auth = ctx.headers.get("authorization");
  const bearer = auth?.match(/^Bearer\s+(\S+)$/i)?.[1] ?? null;
  const fromCookie = bearer === null ? operatorTokenFromCookie(ctx.headers.get("cookie"), ctx.secure) : null;
  if (fromCookie !== null && type === "mutation") refuseForeign(ctx);
  const token = bearer ?? fromCookie;
  const session = token === null ? null : await operatorSession(ctx.db, token);
  if (!session || token === null) {
    if (fromCookie !== null) clearOperatorCookie(ctx.resHeaders, ctx.secure);
    throw new TRPCError({ code: "UNAUTHORIZED", message: MSG.unauthenticated });
  }
  ctx.resHeaders.set("Cache-Control", "no-store");
  return next({
    ctx: { operatorToken: token, operatorVia: bearer !== null ? ("bearer" as const) : ("cookie" as const) },
  });
});
