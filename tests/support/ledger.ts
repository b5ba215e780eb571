import { syncLedger } from "../../src/server/ledger/sync";
import { accountOf } from "../../src/server/accounts/overview";
import type { Db } from "../../src/server/db/client";
import { sessionStore } from "../../src/server/session/store";
import { callerFor, cookieFrom } from "./caller";

/**
 * Signs a site's user in through auth.login (adding the account to `cookie`, as a browser keeps
 * one) and syncs its ledger up to `now`, the budget lifted: the session token, the browser's
 * cookie after it, and the account as the ledger names it.
 */
export async function signInAndSync(
  db: Db,
  siteId: number,
  user: { id: number; token: string },
  now: number,
  cookie = "",
) {
  const { api, ctx } = callerFor(db, cookie ? { cookie } : {});
  const login = await api.auth.login({ userId: user.id, accessToken: user.token, siteId });
  if (!login.success) throw new Error(login.message);
  const session = (await sessionStore(db).findValid(login.data.sessionToken))!;
  const account = accountOf(session);
  await syncLedger(db, account, { db, timeoutMs: 5000, perMinute: 100_000 }, { backfillDays: 40, now });
  return { token: login.data.sessionToken, cookie: cookieFrom(ctx.resHeaders) || cookie, account };
}
