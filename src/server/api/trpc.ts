/**
 * tRPC glue: one initTRPC, the procedures every router builds on.
 * https://trpc.io/docs/server/procedures
 */
import { createHash } from "node:crypto";
import { TRPCError, initTRPC } from "@trpc/server";
import { ZodError } from "zod";
import { Refusal, refusalAnswer } from "../core/errors";
import { MSG } from "../core/messages";
import { once } from "../core/once";
import { isDatabaseUnavailable, isStorageFull, isStoreError } from "../db/errors";
import { commitsFailFull } from "../db/store-writes";
import { sqliteLost } from "../db/sqlite-guard";
import { clearOperatorCookie, operatorTokenFromCookie } from "../admin/cookie";
import { operatorSession } from "../admin/operator";
import { isForeignRequest } from "../net/origin";
import { clearSessionCookie, setBrowserAccounts } from "../session/cookie";
import { resolveSession } from "../session/request";
import { workspaceCookie } from "../workspace/cookie";
import { savedAccounts, siteIndex, SAVED_MSG } from "../workspace/saved-accounts";
import { scoped, type ScopedAccount } from "../workspace/scope";
import { WS_MSG, isWorkspaceToken, workspaceStore, type WorkspaceSession } from "../workspace/workspaces";
import type { Context } from "./context";
import type { ProcedureMeta } from "./rest-routes";
import { badParamMessage } from "./schemas/params";

/** Calls one batched request may carry (the dashboard's client batches up to this many). */
export const MAX_BATCH_SIZE = 10;

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({
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

/**
 * Sends, creates and spends happen once per intent (core/once.ts): the same caller (its
 * credentials), the same procedure and the same input again within moments get the first call's
 * answer instead of a second effect.
 */
export const sentOnce = t.middleware(async ({ ctx, path, getRawInput, next }) => {
  const who = `${ctx.headers.get("authorization") ?? ""}\n${ctx.headers.get("cookie") ?? ""}`;
  const input = JSON.stringify((await getRawInput()) ?? null);
  const key = createHash("sha256").update(`${who}\n${path}\n${input}`).digest("base64url");
  return once(key, () => next());
});

export const router = t.router;
export const mergeRouters = t.mergeRouters;
export const createCallerFactory = t.createCallerFactory;

/**
 * The one error map, around every procedure (its input check included):
 * - a parameter that fails its schema is BAD_REQUEST, a sentence naming it and `（参数 <name>）`
 *   (api/schemas/params.ts; REST answers it as
 *   HTTP 200 `success:false`, docs/api.md);
 * - a Refusal thrown by domain code without a code is the operation's answer in words,
 *   `{success:false, message, ...fields}`; with one, its code and message (and `Retry-After`
 *   when it has one);
 * - a store that cannot be reached is a 503 with a plain message, not a 500 or a hang; a full
 *   disk a 503 that says so; a SQLite file deleted under the server a 503 for every request.
 * Everything else stays a fault: INTERNAL_SERVER_ERROR, answered with a fixed sentence.
 */
export const publicProcedure = t.procedure.use(async ({ ctx, next, path }) => {
  // The SQLite file was deleted or replaced under the running server: nothing may look kept
  // (health and readiness still answer, and say so).
  const lost = path.startsWith("ops.") ? null : sqliteLost();
  if (lost) throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: `${lost}，请从备份恢复后重启服务` });
  const result = await next();
  if (result.ok) return result;
  const { error } = result;
  const cause = error.cause;
  if (error.code === "BAD_REQUEST" && cause instanceof ZodError) {
    throw new TRPCError({ code: "BAD_REQUEST", message: badParamMessage(cause), cause });
  }
  if (error.code !== "INTERNAL_SERVER_ERROR") return result;
  // An outcome of the operation: the answer, in words.
  const words = refusalAnswer(cause);
  if (words) return { ok: true as const, marker: result.marker, data: words };
  if (cause instanceof Refusal && cause.code !== undefined) {
    if (cause.retryAfterSeconds !== undefined) ctx.resHeaders.set("Retry-After", String(cause.retryAfterSeconds));
    throw new TRPCError({ code: cause.code, message: cause.message, cause });
  }
  // A store that cannot write, whatever its error said, while a commit met a full disk lately.
  if (isStorageFull(cause) || (isStoreError(cause) && commitsFailFull()))
    throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: MSG.storageFull, cause });
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

const bearerOf = (headers: Headers) => headers.get("authorization")?.match(/^Bearer\s+(\S+)\s*$/i)?.[1] ?? null;

/**
 * The workspace a request speaks for: a workspace Bearer token (a device's session or an API
 * token), or without any Bearer the workspace cookie. undefined: the request names none (it may
 * name a gateway account's session instead). A dead workspace cookie is cleared and not used.
 */
async function workspaceOf(
  ctx: Context,
): Promise<{ session: WorkspaceSession; via: "bearer" | "cookie" } | null | undefined> {
  const bearer = bearerOf(ctx.headers);
  if (bearer !== null) {
    if (!isWorkspaceToken(bearer)) return undefined;
    const session = await workspaceStore(ctx.db).find(bearer);
    return session ? { session, via: "bearer" } : null;
  }
  const token = workspaceCookie.read(ctx.headers.get("cookie"), ctx.secure);
  if (token === null) return undefined;
  const session = await workspaceStore(ctx.db).find(token);
  if (session) return { session, via: "cookie" };
  workspaceCookie.clear(ctx.resHeaders, ctx.secure);
  return undefined;
}

/** The dependencies of a workspace's saved accounts from a request (renewal is a sign-in). */
export function savedAccountsOf(ctx: Context) {
  return savedAccounts(
    ctx.db,
    {
      timeoutMs: ctx.timeoutMs,
      perMinute: ctx.siteRequestsPerMinute,
      acceptLanguage: ctx.headers.get("accept-language"),
    },
    { clientAddress: ctx.clientAddress, loginRateLimit: ctx.loginRateLimit },
  );
}

/** A workspace's checks: a sync credential refused, cross-site cookie writes refused (CSRF), and writes with a read-only API token. */
function checkWorkspaceWrite(ctx: Context, found: { session: WorkspaceSession; via: string }, type: string) {
  // A sync credential opens the WebDAV folder and nothing else.
  if (found.session.kind === "api-sync") throw new TRPCError({ code: "FORBIDDEN", message: WS_MSG.syncOnly });
  if (type !== "mutation") return;
  if (found.via === "cookie") refuseForeign(ctx);
  if (found.session.kind === "api-read") throw new TRPCError({ code: "FORBIDDEN", message: WS_MSG.readOnly });
}

/**
 * Requires a live workspace session (Bearer or its cookie); `workspace` is that session. Every
 * answer is `no-store`.
 */
export const workspaceProcedure = publicProcedure.use(async ({ ctx, type, next }) => {
  const found = await workspaceOf(ctx);
  if (!found) throw new TRPCError({ code: "UNAUTHORIZED", message: MSG.unauthenticated });
  checkWorkspaceWrite(ctx, found, type);
  ctx.resHeaders.set("Cache-Control", "no-store");
  return next({ ctx: { workspace: found.session, workspaceVia: found.via } });
});

/**
 * The All API Hub sync (WebDAV, docs/design.md 26): a workspace's sync credential, given as a
 * Bearer (the WebDAV adapter turns HTTP Basic into one), and no other.
 */
export const syncProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const bearer = bearerOf(ctx.headers);
  const session = bearer !== null && isWorkspaceToken(bearer) ? await workspaceStore(ctx.db).find(bearer) : null;
  if (session?.kind !== "api-sync") throw new TRPCError({ code: "UNAUTHORIZED", message: MSG.unauthenticated });
  ctx.resHeaders.set("Cache-Control", "no-store");
  return next({ ctx: { workspace: session } });
});

/**
 * The account a request names (docs/design.md 24): the dashboard sends the key of the account its page
 * was rendered for in this header, so a page acts on its own account whatever another tab made
 * active; REST clients may name one with `?account=`.
 */
const PAGE_ACCOUNT_HEADER = "x-gd-account";

const namedAccount = (ctx: Context): string | null => {
  const named = ctx.headers.get(PAGE_ACCOUNT_HEADER) ?? ctx.accountParam;
  return named === null || named === "" ? null : named.slice(0, 64);
};

/** The saved account a workspace request is about: the one it names, else the device's active one, else the first. */
async function chosenAccount(ctx: Context, workspace: WorkspaceSession, rawInput: unknown): Promise<ScopedAccount> {
  const named = namedAccount(ctx) ?? (rawInput as { account?: unknown } | undefined)?.account;
  const accounts = savedAccountsOf(ctx);
  const sites = await siteIndex(ctx.db);
  const list = await accounts.list(workspace.workspaceId, sites);
  let chosen = list[0];
  if (named !== undefined && named !== null && named !== "") {
    const id =
      typeof named === "number" ? named : typeof named === "string" && /^\d{1,12}$/.test(named) ? Number(named) : NaN;
    chosen = list.find((a) => a.id === id);
    if (!chosen) throw new TRPCError({ code: "NOT_FOUND", message: SAVED_MSG.notFound });
  } else if (workspace.activeAccountId !== null) {
    chosen = list.find((a) => a.id === workspace.activeAccountId) ?? chosen;
  }
  if (!chosen) throw new TRPCError({ code: "NOT_FOUND", message: SAVED_MSG.empty });
  return scoped(accounts, chosen, sites);
}

/**
 * A gateway account's session from the request (Bearer, or the cookie's account the request names,
 * else its active one); 401 without. A page whose account left the browser is told so (412).
 */
async function accountSessionOf(ctx: Context, type: string) {
  const named = namedAccount(ctx);
  const found = await resolveSession(ctx.db, ctx.headers, ctx.secure, named);
  if (found?.via === "cookie" && type === "mutation") refuseForeign(ctx);
  if (found?.via === "cookie" && !found.session && named !== null && found.browser.a.length > 0) {
    throw new TRPCError({ code: "PRECONDITION_FAILED", message: MSG.pageAccountGone });
  }
  if (!found?.session) {
    if (found?.via === "cookie") clearSessionCookie(ctx.resHeaders, ctx.secure);
    throw new TRPCError({ code: "UNAUTHORIZED", message: MSG.unauthenticated });
  }
  ctx.resHeaders.set("Cache-Control", "no-store");
  // Accounts whose sessions ended elsewhere dropped out on the way to the active one.
  if (found.via === "cookie" && found.changed) await setBrowserAccounts(ctx.resHeaders, found.browser, ctx.secure);
  return { session: found.session, browser: found.via === "cookie" ? found.browser : null };
}

/**
 * Requires a live session (Bearer, or the cookie's active account); refuses cross-site
 * cookie-authenticated mutations (CSRF). `browser` is the cookie's accounts (null with Bearer).
 * A workspace (its Bearer token or cookie) reads one of its saved accounts the same way: the one
 * `account` names, or its device's active one; `saved` then says which and why its site may not
 * be read now (its ledger always is).
 */
export const authedProcedure = publicProcedure.use(async ({ ctx, type, getRawInput, next }) => {
  const workspace = await workspaceOf(ctx);
  if (workspace === null) throw new TRPCError({ code: "UNAUTHORIZED", message: MSG.unauthenticated });
  if (workspace) {
    checkWorkspaceWrite(ctx, workspace, type);
    const saved = await chosenAccount(ctx, workspace.session, await getRawInput());
    ctx.resHeaders.set("Cache-Control", "no-store");
    return next({ ctx: { session: saved.session, browser: null, workspace: workspace.session, saved } });
  }
  const { session, browser } = await accountSessionOf(ctx, type);
  const none = { workspace: null as WorkspaceSession | null, saved: null as ScopedAccount | null };
  return next({ ctx: { session, browser, ...none } });
});

/**
 * Whoever may see the list of accounts: a workspace (with or without accounts yet; `workspace`
 * set, `account` null), or a gateway account's session (`account` set).
 */
export const viewerProcedure = publicProcedure.use(async ({ ctx, type, next }) => {
  const workspace = await workspaceOf(ctx);
  if (workspace === null) throw new TRPCError({ code: "UNAUTHORIZED", message: MSG.unauthenticated });
  if (workspace) {
    checkWorkspaceWrite(ctx, workspace, type);
    ctx.resHeaders.set("Cache-Control", "no-store");
    return next({ ctx: { workspace: workspace.session, account: null } });
  }
  const account = await accountSessionOf(ctx, type);
  return next({ ctx: { workspace: null as WorkspaceSession | null, account } });
});

/**
 * Requires a live operator session (docs/design.md 15): `Authorization: Bearer` with an operator
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
