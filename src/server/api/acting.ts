/**
 * Acting on an account's site for the caller (docs/design.md 20): who acts, and one action run with
 * the account's checks (a saved account needing a new sign-in, a removed site, the writes a
 * minute per account), its refusals and the site's failures answered, never thrown.
 */
import { accountOf } from "../accounts/overview";
import { giveBackWrite, takeWrite } from "../actions/critical";
import type { Actor } from "../actions/records";
import { InputRefused } from "../actions/redeem";
import { failure, MSG, type Failure } from "../core/messages";
import type { Account, SiteDataDeps } from "../site-data/site-data";
import { deviceOf } from "../workspace/workspaces";
import { siteDepsOf, type AuthedContext } from "./site-deps";

export type Ok<T> = { success: true; data: T };

/** Who acts: the account, the workspace it is saved in (if any), and the device in words. */
export function actorOf(ctx: AuthedContext, session = ctx.session): Actor {
  const api = ctx.workspace ? ctx.workspace.kind !== "device" : ctx.browser === null;
  return {
    siteId: session.siteId,
    siteUserId: session.siteUserId,
    workspaceId: ctx.workspace?.workspaceId ?? null,
    device: api ? "API" : deviceOf(ctx.headers.get("user-agent")),
  };
}

/**
 * One action on the account's site. Its refusals and the site's failures are Refusals, answered
 * in words by the API's error map; one refused for its input gives the write back.
 */
export async function act<T>(
  ctx: AuthedContext,
  write: boolean,
  op: (account: Account, deps: SiteDataDeps, actor: Actor) => Promise<T>,
): Promise<Ok<T> | Failure> {
  if (ctx.saved?.problem) return failure(ctx.saved.problem);
  if (!ctx.session.site) return failure(MSG.siteRemoved);
  const actor = actorOf(ctx);
  const key = `${actor.siteId}:${actor.siteUserId}`;
  const tooFast = write ? takeWrite(key) : null;
  if (tooFast) return failure(tooFast);
  try {
    return { success: true, data: await op(accountOf(ctx.session), siteDepsOf(ctx), actor) };
  } catch (error) {
    if (write && error instanceof InputRefused) giveBackWrite(key);
    throw error;
  }
}
