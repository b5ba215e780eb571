/**
 * How a workspace is entered and its secrets checked, for the workspace router: creation and
 * sign-in (their limits, the cookie, refusals in words for the dashboard), and the steps that
 * check the password or a code on a signed-in device (docs/design.md 24: guesses end the device).
 */
import type { z } from "zod";
import { hitPerMinute, loginRateLimiter } from "../auth/rate-limit";
import { Refusal } from "../core/errors";
import { failure, MSG, type Failure } from "../core/messages";
import { workspaceCookie } from "../workspace/cookie";
import { signup } from "../workspace/signup";
import { totp } from "../workspace/totp";
import { WS_MSG, nameKeyOf, workspaceStore, type OpenedSession, type WorkspaceSession } from "../workspace/workspaces";
import type { Context } from "./context";
import type { registerInput, workspaceLoginInput } from "./schemas/workspace";

const opener = (ctx: Context) => ({ userAgent: ctx.headers.get("user-agent"), address: ctx.clientAddress });

/** The session just opened: its cookie for a browser, its token in the answer for REST clients. */
export function signedIn(ctx: Context, opened: OpenedSession) {
  ctx.resHeaders.set("Cache-Control", "no-store");
  workspaceCookie.set(ctx.resHeaders, opened.token, ctx.secure);
  return {
    success: true as const,
    data: { token: opened.token, expiresAt: opened.expiresAt.toISOString(), workspace: opened.workspace },
  };
}

export async function register(ctx: Context, input: z.infer<typeof registerInput>): Promise<OpenedSession> {
  // Attempts count per address like sign-ins (a name taken is an answer too, not to be farmed).
  const limit = await loginRateLimiter(ctx.db, ctx.loginRateLimit).hitNamed(
    "workspace-create",
    ctx.clientAddress,
    null,
  );
  if (!limit.allowed) throw new Refusal(MSG.rateLimited, "TOO_MANY_REQUESTS", limit.retryAfterSeconds);
  const required = (await signup(ctx.db).mode()) === "invite";
  return workspaceStore(ctx.db).register(input, opener(ctx), { required, code: input.invite });
}

export async function login(ctx: Context, input: z.infer<typeof workspaceLoginInput>): Promise<OpenedSession> {
  const limit = await loginRateLimiter(ctx.db, ctx.loginRateLimit).hitNamed(
    "workspace",
    ctx.clientAddress,
    nameKeyOf(input.name),
  );
  if (!limit.allowed) throw new Refusal(MSG.rateLimited, "TOO_MANY_REQUESTS", limit.retryAfterSeconds);
  const store = workspaceStore(ctx.db);
  const workspace = await store.verify(input.name, input.password);
  if (!workspace) throw new Refusal(WS_MSG.wrongCredentials, "UNAUTHORIZED");
  await totp(ctx.db).check(workspace.id, input.totp);
  return store.open(workspace, opener(ctx));
}

/**
 * The dashboard's own sign-in and creation answer a refusal (wrong password, a second factor
 * needed, a name taken) as `{success:false,message}`, as the account sign-in does; too many
 * attempts stay HTTP 429 with Retry-After.
 */
export async function inWords(
  open: () => Promise<{ id: number; name: string }>,
): Promise<{ success: true; data: { workspace: { id: number; name: string } } } | Failure> {
  try {
    return { success: true, data: { workspace: await open() } };
  } catch (error) {
    if (error instanceof Refusal && error.code !== "TOO_MANY_REQUESTS") return failure(error.message);
    throw error;
  }
}

/** A step that checks the workspace's password or code: too many wrong ones sign this device out. */
export async function guessing<T>(ctx: Context & { workspace: WorkspaceSession }, step: () => Promise<T>): Promise<T> {
  try {
    return await workspaceStore(ctx.db).guessing(ctx.workspace, step);
  } catch (error) {
    if (error instanceof Refusal && error.message === WS_MSG.tooManyWrong)
      workspaceCookie.clear(ctx.resHeaders, ctx.secure);
    throw error;
  }
}

/** Something only a signed-in device may do, never an API token. */
export function deviceOnly(kind: string): void {
  if (kind !== "device") throw new Refusal("只能在登录的设备上进行此操作，API 令牌不能", "FORBIDDEN");
}

/**
 * A workspace's turn at something costly that its own floods must not make everyone's (probes of
 * addresses, restores, WebDAV writes): at most `perMinute` a minute for the workspace, and four
 * times that for the client address whatever workspace it speaks for (the workspaces of a team
 * share one office's address); 429 with Retry-After past them.
 */
export async function paced(
  ctx: Context & { workspace: WorkspaceSession },
  what: string,
  perMinute: number,
  message: string,
): Promise<void> {
  const keys: Array<[string, number]> = [[`${what}:w${ctx.workspace.workspaceId}`, perMinute]];
  if (ctx.clientAddress) keys.push([`${what}:a${ctx.clientAddress}`, 4 * perMinute]);
  for (const [key, limit] of keys) {
    const decision = await hitPerMinute(ctx.db, key, limit);
    if (!decision.allowed) throw new Refusal(message, "TOO_MANY_REQUESTS", decision.retryAfterSeconds);
  }
}
