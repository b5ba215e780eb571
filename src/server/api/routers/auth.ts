import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { logError } from "../../core/log";
import { MSG, failureSchema } from "../../core/messages";
import { login, type LoginOutcome } from "../../auth/login";
import type { LoginInput } from "../../auth/login-input";
import { loginRateLimiter } from "../../auth/rate-limit";
import {
  loginSuccessSchema,
  logoutSuccessSchema,
  meSuccessSchema,
  signInSuccessSchema,
  type UserInfo,
} from "../../auth/schemas";
import { withSignedIn, without } from "../../session/browser";
import { clearSessionCookie, setBrowserAccounts } from "../../session/cookie";
import { browserAccounts } from "../../session/request";
import { sessionStore } from "../../session/store";
import type { Context } from "../context";
import { startLedgerSync } from "../site-deps";
import { authedProcedure, router, signInProcedure } from "../trpc";
import { rest } from "../rest-routes";

/** Login takes any JSON value: the contract answers bad bodies with a message, not a 400. */
const loginBody = z.custom<LoginInput>(() => true);

/** The login flow behind a rate limit; a success sets the session cookie. */
async function signIn(ctx: Context, body: unknown): Promise<LoginOutcome["result"]> {
  const limit = await loginRateLimiter(ctx.db, ctx.loginRateLimit).hit(ctx.clientAddress, body);
  if (!limit.allowed) {
    ctx.resHeaders.set("Retry-After", String(limit.retryAfterSeconds));
    throw new TRPCError({ code: "TOO_MANY_REQUESTS", message: MSG.rateLimited });
  }
  const outcome = await login(body, {
    db: ctx.db,
    timeoutMs: ctx.timeoutMs,
    perMinute: ctx.siteRequestsPerMinute,
    acceptLanguage: ctx.headers.get("accept-language"),
    onInternalError: (error) => logError("login", error),
  });
  if (outcome.expiresAt) {
    ctx.resHeaders.set("Cache-Control", "no-store");
    // The browser's other accounts stay; this one becomes active (replacing an older session of it).
    const { sessionToken, site, userInfo } = outcome.result.data;
    const accounts = await withSignedIn(ctx.db, await browserAccounts(ctx.headers, ctx.secure), {
      t: sessionToken,
      s: site.id,
      u: userInfo.id,
    });
    await setBrowserAccounts(ctx.resHeaders, accounts, ctx.secure);
    // The account's ledger catches up in the background (docs/design.md 13).
    if (ctx.ledgerSyncMinutes > 0) {
      const session = await sessionStore(ctx.db).findValid(sessionToken);
      if (session) startLedgerSync(ctx, session);
    }
  }
  return outcome.result;
}

export const authRouter = router({
  /** The REST contract's login: the session token in the answer, for clients that send it as Bearer. */
  login: signInProcedure
    .meta(rest("POST", "/api/auth/login"))
    .input(loginBody)
    .output(z.union([loginSuccessSchema, failureSchema]))
    .mutation(({ ctx, input }) => signIn(ctx, input)),

  /** The dashboard's sign-in: the same flow, answered without the token (the cookie carries it). */
  signIn: signInProcedure
    .input(loginBody)
    .output(z.union([signInSuccessSchema, failureSchema]))
    .mutation(async ({ ctx, input }) => {
      const result = await signIn(ctx, input);
      if (!result.success) return result;
      const { userInfo, site } = result.data;
      return { success: true as const, data: { userInfo, site } };
    }),

  /** Ends the session; with the cookie, the browser's most recently used other account becomes active. */
  logout: authedProcedure
    .meta(rest("POST", "/api/auth/logout", { input: "none" }))
    .output(logoutSuccessSchema)
    .mutation(async ({ ctx }) => {
      await sessionStore(ctx.db).remove(ctx.session.id);
      if (ctx.browser) await setBrowserAccounts(ctx.resHeaders, without(ctx.browser, ctx.session.id), ctx.secure);
      else clearSessionCookie(ctx.resHeaders, ctx.secure);
      return { success: true as const };
    }),

  me: authedProcedure
    .meta(rest("GET", "/api/auth/me"))
    .output(meSuccessSchema)
    .query(({ ctx }) => {
      const { site } = ctx.session;
      return {
        success: true as const,
        data: { userInfo: JSON.parse(ctx.session.userInfo) as UserInfo, ...(site ? { site } : {}) },
      };
    }),
});
