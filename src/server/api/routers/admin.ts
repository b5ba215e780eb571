import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { clearOperatorCookie, setOperatorCookie } from "../../admin/cookie";
import { OperatorError, auditLog, operatorSignIn, operatorSignOut } from "../../admin/operator";
import type { Context } from "../context";
import { operatorProcedure, router, signInProcedure } from "../trpc";

/** The body as it came: a missing or wrong password is the uniform 401, not a 400. */
const loginBody = z.custom<{ password?: unknown } | undefined>(() => true);

async function signIn(ctx: Context, body: { password?: unknown } | undefined) {
  try {
    const password = typeof body === "object" && body !== null ? body.password : undefined;
    const { token } = await operatorSignIn(ctx.db, {
      password,
      clientAddress: ctx.clientAddress,
      perMinute: ctx.loginRateLimit,
    });
    setOperatorCookie(ctx.resHeaders, token, ctx.secure);
    ctx.resHeaders.set("Cache-Control", "no-store");
    return token;
  } catch (error) {
    if (!(error instanceof OperatorError)) throw error;
    if (error.kind === "rateLimited") {
      ctx.resHeaders.set("Retry-After", String(error.retryAfterSeconds));
      throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: error.message });
    }
    if (error.kind === "notSet") throw new TRPCError({ code: "PRECONDITION_FAILED", message: error.message });
    throw new TRPCError({ code: "UNAUTHORIZED", message: error.message });
  }
}

/** Site administration (design.md 15): the operator's sign-in, and what operators did. */
export const adminRouter = router({
  /** REST POST /api/admin/login: the token for Bearer use (the cookie is set too). */
  login: signInProcedure.input(loginBody).mutation(async ({ ctx, input }) => ({
    success: true as const,
    data: { token: await signIn(ctx, input) },
  })),

  /** The admin page's sign-in: the same, answered without the token (the cookie carries it). */
  signIn: signInProcedure.input(loginBody).mutation(async ({ ctx, input }) => {
    await signIn(ctx, input);
    return { success: true as const };
  }),

  /** REST POST /api/admin/logout: ends the operator session. */
  logout: operatorProcedure.mutation(async ({ ctx }) => {
    await operatorSignOut(ctx.db, ctx.operatorToken);
    clearOperatorCookie(ctx.resHeaders, ctx.secure);
    return { success: true as const };
  }),

  /** Every operator sign-in, failed sign-in and change, newest first. */
  audit: operatorProcedure.query(async ({ ctx }) => ({ success: true as const, data: await auditLog(ctx.db) })),
});
