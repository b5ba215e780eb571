import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { login, type LoginInput, type UserInfo } from "../../auth/login";
import { attemptKeys, loginRateLimiter } from "../../auth/rate-limit";
import { MSG } from "../../messages";
import { logError } from "../../log";
import { clearSessionCookie, setSessionCookie } from "../../session/cookie";
import { sessionStore } from "../../session/store";
import { failureSchema, loginSuccessSchema, logoutSuccessSchema, meSuccessSchema } from "../schemas";
import { authedProcedure, isSecure, publicProcedure, router } from "../trpc";

/** Login takes any JSON value: the contract answers bad bodies with a message, not a 400. */
const loginBody = z.custom<LoginInput>(() => true);

export type MeResult = z.infer<typeof meSuccessSchema>;

const loginResult = z.union([loginSuccessSchema, failureSchema]);

export const authRouter = router({
  login: publicProcedure.input(loginBody).output(loginResult).mutation(async ({ ctx, input }) => {
    const limit = await loginRateLimiter(ctx.db, ctx.loginRateLimit).hit(attemptKeys(ctx.clientAddress, input));
    if (!limit.allowed) {
      ctx.resHeaders.set("Retry-After", String(limit.retryAfterSeconds));
      throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: MSG.rateLimited });
    }
    const outcome = await login(input, {
      db: ctx.db,
      timeoutMs: ctx.timeoutMs,
      acceptLanguage: ctx.headers.get("accept-language"),
      onInternalError: (error) => logError("login", error),
    });
    if (outcome.expiresAt) {
      ctx.resHeaders.set("Cache-Control", "no-store");
      await setSessionCookie(ctx.resHeaders, outcome.result.data.sessionToken, outcome.expiresAt, isSecure(ctx));
    }
    return outcome.result;
  }),

  logout: authedProcedure.output(logoutSuccessSchema).mutation(async ({ ctx }) => {
    await sessionStore(ctx.db).remove(ctx.session.id);
    clearSessionCookie(ctx.resHeaders, ctx.secure);
    return { success: true as const };
  }),

  me: authedProcedure.output(meSuccessSchema).query(({ ctx }): MeResult => {
    const { site } = ctx.session;
    return {
      success: true,
      data: {
        userInfo: JSON.parse(ctx.session.userInfo) as UserInfo,
        ...(site ? { site } : {}),
      },
    };
  }),
});
