import { expect } from "vitest";
import { createContextInner, type ContextOptions } from "../../src/server/api/context";
import { createCaller } from "../../src/server/api/root";
import type { Db } from "../../src/server/db/client";
import { ALICE } from "./gateway";

/** Calls procedures in-process, as a request with these headers would. */
export function callerFor(db: Db, headers: Record<string, string> = {}, opts: Partial<ContextOptions> = {}) {
  const ctx = createContextInner({ db, headers: new Headers(headers), ...opts });
  return { api: createCaller(ctx), ctx };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The first cookie a response sets, as a browser would send it back (`name=value`). */
export function cookieFrom(resHeaders: Headers): string {
  return (resHeaders.get("set-cookie") ?? "").split(";")[0] ?? "";
}

/** Signs a user in through auth.login; the token, and the cookie a browser would keep. */
export async function signInWith(
  db: Db,
  siteId: number,
  user: { id: number | string; token: string } = ALICE,
  opts: Partial<ContextOptions> = {},
) {
  const { api, ctx } = callerFor(db, {}, opts);
  const result = await api.auth.login({ userId: user.id, accessToken: user.token, siteId });
  if (!result.success) throw new Error(`login failed: ${result.message}`);
  return { token: result.data.sessionToken, cookie: cookieFrom(ctx.resHeaders), data: result.data };
}

/**
 * A parameter the procedure refuses: BAD_REQUEST, a sentence naming it, and its name for programs
 * (REST answers it as HTTP 200 `success:false`).
 */
export async function expectBadParam(call: Promise<unknown>, param: string): Promise<void> {
  await expect(call).rejects.toMatchObject({
    code: "BAD_REQUEST",
    message: expect.stringMatching(new RegExp(`^[^a-z].*（参数 ${param}）$`)) as unknown,
  });
}
