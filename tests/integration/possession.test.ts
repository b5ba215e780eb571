import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import { demoHistory } from "../../src/demo/history";
import { freshProcessState } from "../../src/server/core/process-state";
import { metrics } from "../../src/server/core/metrics";
import { syncLedger } from "../../src/server/ledger/sync";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/**
 * Power follows possession (docs/design.md 24): a holder whose token the site no longer accepts (the
 * owner reset it, or the site refused it) loses its power over the account at once: no sessions
 * to list or end, no history to delete, nothing of the owner's later usage, and its saved account
 * says 需要重新授权 at the first refusal, not at the next renewal.
 */

let store: TempDb;
let site: RunningGateway;
let siteId: number;
const NOW = Math.floor(Date.now() / 1000);
const HOUR = NOW - (NOW % 3600);

function owner(id: number, token: string): GatewayUser {
  const history = demoHistory({ seed: id, days: 5, callsPerDay: 30, now: HOUR - 3600 });
  return { accessToken: token, data: newApiUser(id, { username: `owner${id}` }), logs: history.logs };
}
const USERS = [owner(601, "sk-old-601-0123456789abcdef"), owner(602, "sk-old-602-0123456789abcdef")];
const [ALEX, BEA] = USERS as [GatewayUser, GatewayUser];

let address = 0;
const caller = (headers: Record<string, string> = {}, opts: Record<string, unknown> = {}) =>
  callerFor(store.db, headers, { timeoutMs: 2000, clientAddress: `192.0.2.${++address}`, ...opts });

async function workspaceHolding(name: string, user: GatewayUser, id: number) {
  const token = (await caller().api.workspace.register({ name, password: "correct horse battery" })).data.token;
  const api = caller(bearer(token)).api;
  const saved = await api.workspace.addAccount({ siteId, userId: id, accessToken: user.accessToken });
  if (!saved.success) throw new Error(saved.message);
  const accountId = saved.data.account.id;
  const row = await store.db.workspaceAccount.findUnique({ where: { id: accountId }, select: { sessionId: true } });
  // The account session its verification opened (the one its syncs read through).
  return { api, token, accountId, sessionId: row!.sessionId! };
}

const sync = (id: number, sessionId: string) =>
  syncLedger(
    store.db,
    { sessionId, siteId, siteUrl: site.url, siteUserId: id, userId: id },
    { db: store.db, timeoutMs: 5000, perMinute: 100_000 },
    { backfillDays: 10 },
  );

beforeAll(async () => {
  store = await tempStore();
  site = await startGateway({ family: "new-api", users: USERS, requireUserHeader: true, failureStatus: 401 });
  siteId = (await siteRegistry(store.db).add({ name: "持有站", url: site.url })).id;
});
afterAll(async () => {
  await site?.close();
  await store?.cleanup();
});
beforeEach(() => {
  freshProcessState();
});

describe("after the owner resets the token", () => {
  it("a workspace holding the old one lists no sessions, deletes no history and sees none of the owner's later usage", async () => {
    const former = await workspaceHolding("旧令牌", ALEX, 601);
    await sync(601, former.sessionId);
    const range = { from: new Date((HOUR - 6 * 86_400) * 1000).toISOString().slice(0, 10), tz: "UTC" };
    const before = await former.api.usage.summary({ ...range, groupBy: "day" });
    const rowsBefore = await former.api.export.count(range);
    const statusBefore = await former.api.usage.status();

    // The owner resets the token on the site and signs in here with the new one.
    ALEX.accessToken = "sk-new-601-0123456789abcdef";
    const signedIn = await caller().api.auth.login({ siteId, userId: 601, accessToken: ALEX.accessToken });
    if (!signedIn.success) throw new Error(signedIn.message);
    const ownerApi = caller(bearer(signedIn.data.sessionToken)).api;

    // Nothing asked of the site: the workspace's account needs re-authorisation at once.
    const asked = site.requests.length;
    const listed = (await former.api.workspace.accounts()).data.accounts;
    expect(listed).toEqual([
      expect.objectContaining({
        id: former.accountId,
        state: "reauth",
        stateMessage: "站点已不再接受保存的访问令牌（令牌已重置或被拒绝），请重新授权",
      }),
    ]);
    expect(site.requests.length).toBe(asked);

    // No power over the owner's sessions (it took the owner's new one from 200 to 401 before).
    await expect(former.api.session.list()).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(former.api.session.revokeOthers()).rejects.toMatchObject({ code: "FORBIDDEN" });
    const [ownerSession] = await ownerApi.session.list();
    await expect(former.api.session.revoke({ id: ownerSession!.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect((await ownerApi.auth.me()).success).toBe(true);

    // The owner's later usage, synced with the new token: never the former holder's to read
    // (it keeps the account's history up to the hour its token ended).
    const ended = await store.db.accountCredential.findFirst({
      where: { siteId, siteUserId: 601, endedAt: { not: null } },
      select: { endedAt: true },
    });
    const endedSecond = Math.floor(ended!.endedAt!.getTime() / 1000);
    ALEX.logs!.push({
      createdAt: Math.max(NOW, endedSecond - (endedSecond % 3600)),
      type: 2,
      model: "gpt-4o",
      tokenName: "after-reset",
      tokenId: 1,
      quota: 777_777,
      promptTokens: 10,
      completionTokens: 10,
      durationMs: 100,
      stream: false,
      content: "after the reset",
    });
    const ownerSessionId = (await store.db.session.findFirst({
      where: { siteId, siteUserId: 601 },
      select: { id: true },
    }))!.id;
    await sync(601, ownerSessionId);
    const ownerSummary = await ownerApi.usage.summary({ ...range, groupBy: "token" });
    expect(ownerSummary.data.rows.map((r) => r.key)).toContain("after-reset");
    const after = await former.api.usage.summary({ ...range, groupBy: "day" });
    expect(after.data.totals).toEqual(before.data.totals);
    const byToken = await former.api.usage.summary({ ...range, groupBy: "token" });
    expect(byToken.data.rows.map((r) => r.key)).not.toContain("after-reset");
    const logs = await former.api.account.logs({ pageSize: 100 });
    expect(JSON.stringify(logs)).not.toContain("after-reset");
    expect((await former.api.export.count(range)).data.rows).toBe(rowsBefore.data.rows);
    expect((await former.api.usage.status()).entries).toBe(statusBefore.entries);
    expect((await ownerApi.export.count(range)).data.rows).toBe(rowsBefore.data.rows + 1);

    // Removing its account with the history: the history stays (the owner's, synced with the new token).
    const entries = await store.db.ledgerEntry.count({ where: { siteId, siteUserId: 601 } });
    const removed = await former.api.workspace.removeAccount({ id: former.accountId, ledger: true });
    expect(removed.data).toMatchObject({ ledgerDeleted: false, entries: 0 });
    expect(await store.db.ledgerEntry.count({ where: { siteId, siteUserId: 601 } })).toBe(entries);
  });
});

describe("a refusal on any call", () => {
  it("moves the saved account to 需要重新授权 at the first refused sync, confirmed once with /api/user/self", async () => {
    const holder = await workspaceHolding("被拒绝", BEA, 602);
    const { sessionId } = holder;
    // The site stops accepting the token (reset on the site, nobody signs in here).
    BEA.accessToken = "sk-other-602-0123456789abcdef";
    const from = site.requests.length;
    await expect(sync(602, sessionId)).rejects.toMatchObject({ kind: "refused" });
    const asked = site.requests.slice(from).map((r) => r.path);
    // One question settles it: the refused call itself, or one confirmation after it.
    expect(asked.filter((p) => p === "/api/user/self")).toHaveLength(1);
    // Known at once: listing the workspace asks the site nothing more.
    const settled = site.requests.length;
    const [account] = (await holder.api.workspace.accounts()).data.accounts;
    expect(account).toMatchObject({ state: "reauth" });
    expect(site.requests.length).toBe(settled);
    // Its session is gone; no renewal is tried with a token the site refused.
    expect(await store.db.session.count({ where: { id: sessionId } })).toBe(0);
    const more = site.requests.length;
    await holder.api.account.summary({}).catch(() => undefined);
    expect(site.requests.length).toBe(more);
    // A live read of a browser session refused the same way ends it at once.
    BEA.accessToken = "sk-live-602-0123456789abcdef";
    const signed = await caller().api.auth.login({ siteId, userId: 602, accessToken: BEA.accessToken });
    if (!signed.success) throw new Error(signed.message);
    BEA.accessToken = "sk-reset-again-602-0123456789";
    const live = caller(bearer(signed.data.sessionToken)).api;
    const at = site.requests.length;
    expect(await live.actions.proxyRead({ method: "GET", path: "token/", query: "p=1" })).toMatchObject({
      success: false,
      message: "站点拒绝了访问令牌，请重新登录",
    });
    // The refused token list, then the one confirmation.
    expect(site.requests.slice(at).map((r) => r.path)).toEqual(["/api/token/", "/api/user/self"]);
    await expect(live.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});

describe("a workspace's verifications", () => {
  it("count as sign-ins: the limit per address, one try per account of a file, a turn among live calls", async () => {
    const token = (await caller().api.workspace.register({ name: "猜令牌", password: "correct horse battery" })).data
      .token;
    const from = "203.0.113.150";
    const api = callerFor(store.db, bearer(token), { timeoutMs: 2000, clientAddress: from, loginRateLimit: 5 }).api;
    const before = site.requests.filter((r) => r.path === "/api/user/self").length;
    const guesses = Array.from({ length: 20 }, (_, i) => ({
      site_url: site.url,
      site_name: "持有站",
      account_info: { id: 1, access_token: `guess-${i}-0123456789abcdef` },
    }));
    const imported = await api.workspace.importAccounts({ file: { accounts: { accounts: guesses } } });
    const results = imported.data.outcomes.map((o) => o.result);
    expect(results.filter((r) => r === "refused")).toHaveLength(1);
    expect(results.filter((r) => r === "skipped")).toHaveLength(19);
    expect(site.requests.filter((r) => r.path === "/api/user/self").length - before).toBe(1);

    const liveWaits = () =>
      metrics()
        .budgetWaitSeconds.get()
        .then((m) => m.values.filter((v) => v.labels.kind === "live" && v.metricName?.endsWith("_count")));
    const countOf = async () => (await liveWaits()).reduce((n, v) => n + v.value, 0);
    const waitsBefore = await countOf();
    for (let i = 0; i < 4; i++) {
      const answer = await api.workspace.addAccount({ siteId, userId: 1, accessToken: `again-${i}-0123456789abcdef` });
      expect(answer.success).toBe(false);
    }
    // The sixth attempt from this address in the minute: refused before the site is asked.
    const asked = site.requests.length;
    await expect(
      api.workspace.addAccount({ siteId, userId: 1, accessToken: "one-more-0123456789abcdef" }),
    ).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS", message: "登录尝试过于频繁，请稍后再试" });
    expect(site.requests.length).toBe(asked);
    // Each verification waited its turn as a live call, not ahead of everyone as a sign-in.
    expect((await countOf()) - waitsBefore).toBe(4);
  });
});

describe("two tabs of one browser", () => {
  it("acts on the account each page was rendered for, and says so when that account is gone", async () => {
    const xavier = owner(611, "sk-xavier-0123456789abcdef");
    const yvonne = owner(612, "sk-yvonne-0123456789abcdef");
    USERS.push(xavier, yvonne);
    const signIn = async (cookie: string, id: number, token: string) => {
      const { api, ctx } = caller(cookie ? { cookie } : {});
      const answer = await api.auth.signIn({ siteId, userId: id, accessToken: token });
      if (!answer.success) throw new Error(answer.message);
      return (ctx.resHeaders.get("set-cookie") ?? "").split(";")[0]!;
    };
    let cookie = await signIn("", 611, xavier.accessToken);
    // Tab A renders X's 令牌 page: the key it names on every call.
    const keyX = (await caller({ cookie }).api.account.current()).key;
    // Tab B adds Y and opens it: Y is the cookie's active account now.
    cookie = await signIn(cookie, 612, yvonne.accessToken);
    const tabA = caller({ cookie, "x-gd-account": keyX }).api;
    const tabB = caller({ cookie }).api;
    expect((await tabB.auth.me()).data.userInfo.id).toBe(612);

    // Back in tab A, without a reload: the write lands on X, the read shows X.
    expect((await tabA.auth.me()).data.userInfo.id).toBe(611);
    const made = await tabA.tokens.create({ name: "tab-a-token" });
    expect(made.success).toBe(true);
    const last = site.requests.filter((r) => r.method === "POST" && r.path === "/api/token/").at(-1)!;
    expect(last.headers["new-api-user"]).toBe("611");
    const proxied = await tabA.actions.proxyRead({ method: "GET", path: "user/self", query: "" });
    expect(proxied).toMatchObject({ success: true, data: { id: 611 } });

    // Tab B signs X out: tab A is told, and acts on nobody else.
    const keys = (await tabB.account.list()).accounts;
    const next = await caller({ cookie }).api.account.signOut({ key: keys.find((a) => a.userId === 611)!.key });
    expect(next.remaining).toBe(1);
    // Tab A still sends the cookie it had (X's session in it, now ended).
    const stale = caller({ cookie, "x-gd-account": keyX }).api;
    const gone = {
      code: "PRECONDITION_FAILED",
      message: "此页面所属的账户已不在本浏览器中（已退出或已过期），请刷新页面",
    };
    await expect(stale.tokens.create({ name: "must-not-land" })).rejects.toMatchObject(gone);
    await expect(stale.actions.checkin()).rejects.toMatchObject(gone);
    await expect(stale.auth.me()).rejects.toMatchObject(gone);
    expect(site.requests.some((r) => JSON.stringify(r).includes("must-not-land"))).toBe(false);
  });
});
