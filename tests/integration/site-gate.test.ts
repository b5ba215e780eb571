import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SiteBusy, gatesKept, nextSlot, pauseSite, throughGate, useSharedBudget } from "../../src/server/gateway/gate";
import { liveRequest } from "../../src/server/core/live-load";
import { postgresBudget } from "../../src/server/db/site-budget";
import { metrics } from "../../src/server/core/metrics";
import { freshProcessState } from "../../src/server/core/process-state";
import { siteRegistry } from "../../src/server/sites/registry";
import { syncLedger } from "../../src/server/ledger/sync";
import { accountOf } from "../../src/server/accounts/overview";
import { sessionStore } from "../../src/server/session/store";
import { newApiUser, startGateway, type GatewayOptions, type RunningGateway } from "../../src/demo/gateway";
import { demoHistory } from "../../src/demo/history";
import { bearer, callerFor, signInWith } from "../support/caller";
import { freshRateWindow } from "../support/http";
import { tempStore, type TempDb } from "../support/db";
import { startFamilySite, type FamilySite } from "../support/families";

/** A live read refused for the site's budget or pause, saying when to try again. */
const SITE_BUSY = /^站点繁忙，请约 \d+ 秒后再试$/;

/**
 * How the service treats the sites: a request budget, at most 4 calls in flight, a pause after a
 * 429, and a clear message for every way a site fails. In-process callers (the real routers), real
 * stand-in sites on loopback.
 */

let store: TempDb;
const open: RunningGateway[] = [];

beforeEach(async () => {
  store = await tempStore();
  freshProcessState();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((g) => g.close()));
  await store.cleanup();
});

async function site(extra: Partial<GatewayOptions> = {}, family: FamilySite["family"] = "new-api") {
  const s = await startFamilySite(family, 0, extra);
  open.push(s.gateway);
  const { id } = await siteRegistry(store.db).add({ name: "站点", url: s.gateway.url });
  const { token } = await signInWith(store.db, id, s.user);
  // The sign-in took a slot of the budget too (tested on its own below): count from here.
  freshProcessState();
  const call = (perMinute = 1000, siteBudgetWaitMs?: number) =>
    callerFor(store.db, bearer(token), { siteRequestsPerMinute: perMinute, siteBudgetWaitMs }).api;
  return { ...s, siteId: id, token, call };
}

describe("the site's budget", () => {
  it("sends no more than SITE_REQUESTS_PER_MINUTE calls a minute; with no wait allowed, says 站点繁忙 past it", async () => {
    const s = await site();
    const before = s.gateway.requests.length;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => s.call(5, 0).account.logs({ page: i + 1, pageSize: 10 })),
    );
    expect(s.gateway.requests.length - before).toBe(5); // the status probe and four log pages
    const ok = answers.filter((a) => a.success).length;
    expect(ok).toBe(4);
    expect(answers.filter((a) => !a.success)).toEqual(
      Array.from({ length: 4 }, () => ({ success: false, message: expect.stringMatching(SITE_BUSY) as unknown })),
    );
  });

  it("makes a call past the budget wait for the slot the oldest call frees, not fail", () => {
    expect(nextSlot([], 3, 5_000)).toBe(5_000);
    expect(nextSlot([1_000, 2_000], 3, 5_000)).toBe(5_000);
    // The oldest of the last three frees its slot a minute (and a second of margin) after it went.
    expect(nextSlot([1_000, 2_000, 3_000], 3, 5_000)).toBe(62_000);
    // Reservations already queued: the next waits for the third-newest to age out.
    expect(nextSlot([1_000, 2_000, 3_000, 62_000, 63_000], 3, 5_000)).toBe(64_000);
    // Calls older than the window no longer count.
    expect(nextSlot([1_000, 2_000, 3_000], 3, 62_500)).toBe(62_500);
  });

  it("waits for the slot: a call past the budget is still pending, then goes", async () => {
    const s = await site();
    const before = s.gateway.requests.length;
    const first = await s.call(2).account.logs({ page: 1 });
    expect(first.success).toBe(true); // the probe and this page: the budget of 2 is spent
    let settled = false;
    const waiting = s
      .call(2)
      .account.logs({ page: 2 })
      .finally(() => (settled = true));
    waiting.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 400));
    expect(settled).toBe(false);
    expect(s.gateway.requests.length - before).toBe(2);
  });

  it("keeps at most 4 calls in flight to one site, and all of them get through", async () => {
    const s = await site({ latencyMs: 150 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => s.call().account.logs({ page: i + 1, pageSize: 5 })),
    );
    expect(answers.every((a) => a.success)).toBe(true);
    expect(s.gateway.peakInFlight()).toBe(4);
  });

  it("leaves a fifth of the budget to live views while a ledger sync reads the site", async () => {
    const s = await site();
    const session = (await sessionStore(store.db).findValid(s.token))!;
    const before = s.gateway.requests.length;
    // A budget of 10 a minute: the sync may take 8 of them (what live views leave idle, less a
    // fifth kept for them), one call at a time (with no wait allowed, it stops there, to resume later).
    const sync = syncLedger(
      store.db,
      accountOf(session),
      { db: store.db, timeoutMs: 5000, perMinute: 10, maxWaitMs: 0 },
      { backfillDays: 30 },
    );
    await expect(sync).rejects.toThrow(SITE_BUSY);
    expect(s.gateway.requests.length - before).toBe(8); // the probe, the balance and six log pages
    expect(s.gateway.peakInFlight()).toBe(1);
    // Live views still have their fifth, and then the minute is spent.
    const live = await Promise.all(
      Array.from({ length: 3 }, (_, i) => s.call(10, 0).account.logs({ page: i + 10, pageSize: 5 })),
    );
    expect(live.filter((a) => a.success)).toHaveLength(2);
  });

  it("lets no background call go while a live one waits for its place", async () => {
    let release: () => void = () => undefined;
    const hang = new Promise<void>((resolve) => (release = resolve));
    // Four live calls hold every place in flight; a fifth waits for one.
    const live = Array.from({ length: 5 }, () => throughGate(991, { perMinute: 100 }, () => hang));
    const background = throughGate(991, { perMinute: 100, maxWaitMs: 300, background: true }, () =>
      Promise.resolve("went"),
    );
    await expect(background).rejects.toBeInstanceOf(SiteBusy);
    release();
    await Promise.all(live);
    await expect(throughGate(991, { perMinute: 100, background: true }, () => Promise.resolve("went"))).resolves.toBe(
      "went",
    );
  });

  it("holds a background call that yields while people begin to be served, not a person's own; it goes after them", async () => {
    // On PostgreSQL through the deployment's shared budget, on SQLite in this process.
    const shared = process.env.TEST_STORE === "postgres";
    if (shared) await useSharedBudget(postgresBudget(store.db));
    const sent: string[] = [];
    const answered = liveRequest();
    try {
      const runner = throughGate(992, { perMinute: 100, background: true, yields: true }, () =>
        Promise.resolve(sent.push("runner")),
      );
      const own = throughGate(992, { perMinute: 100, background: true }, () => Promise.resolve(sent.push("own")));
      await own;
      await new Promise((r) => setTimeout(r, 600));
      expect(sent).toEqual(["own"]);
      answered();
      // Nobody served a second later: the held call goes.
      await runner;
      expect(sent).toEqual(["own", "runner"]);
    } finally {
      answered();
      if (shared) await useSharedBudget(null);
    }
  });

  it("shares one call among identical requests in flight", async () => {
    const s = await site({ latencyMs: 100 });
    const before = s.gateway.requests.length;
    const answers = await Promise.all(Array.from({ length: 10 }, () => s.call().account.tokens({})));
    expect(answers.every((a) => a.success)).toBe(true);
    expect(s.gateway.requests.filter((r) => r.path === "/api/token/")).toHaveLength(1);
    expect(s.gateway.requests.length - before).toBe(2); // the probe and the one token page
  });
});

describe("sign-ins and the accounts waiting for one site", () => {
  it("sends sign-ins through the site's budget (first in line) and holds them back after a 429", async () => {
    const s = await startFamilySite("new-api", 0);
    open.push(s.gateway);
    const { id } = await siteRegistry(store.db).add({ name: "站点", url: s.gateway.url });
    await siteRegistry(store.db).setBudget(id, 5);
    const login = () =>
      callerFor(store.db, {}, { loginRateLimit: 0, timeoutMs: 800 }).api.auth.login({
        userId: s.user.id,
        accessToken: s.user.token,
        siteId: id,
      });
    const answers = await Promise.all(Array.from({ length: 12 }, login));
    const selfCalls = () => s.gateway.requests.filter((r) => r.path === "/api/user/self").length;
    expect(selfCalls()).toBe(5);
    expect(answers.filter((a) => a.success)).toHaveLength(5);
    for (const a of answers.filter((x) => !x.success)) {
      expect(a).toEqual({ success: false, message: "无法连接站点: 站点繁忙，请稍后再试" });
    }

    // A site that asks for quiet (429, Retry-After: 120) gets none of the next sign-ins.
    freshProcessState();
    const quiet = await startGateway({
      users: [],
      intercept: (_req, res) => {
        res.writeHead(429, { "Retry-After": "120" });
        res.end();
        return true;
      },
    });
    open.push(quiet);
    const q = await siteRegistry(store.db).add({ name: "限流站点", url: quiet.url });
    const to = (siteId: number) =>
      callerFor(store.db, {}, { loginRateLimit: 0 }).api.auth.login({ userId: 1, accessToken: "x".repeat(20), siteId });
    expect(await to(q.id)).toEqual({ success: false, message: "无法连接站点: 站点繁忙，请稍后再试" });
    for (let i = 0; i < 4; i++) expect((await to(q.id)).success).toBe(false);
    expect(quiet.requests).toHaveLength(1);
  });

  /** One site with two accounts of its own, each signed in; calls as either. */
  async function twoAccounts(extra: Partial<GatewayOptions> = {}) {
    const history = demoHistory({ seed: 5, days: 3, callsPerDay: 200 });
    const users = [301, 302].map((id) => ({
      accessToken: `two-accounts-token-${id}-0123456789`,
      data: newApiUser(id, { username: `user-${id}` }),
      logs: history.logs,
    }));
    const g = await startGateway({ family: "new-api", users, ...extra });
    open.push(g);
    const { id } = await siteRegistry(store.db).add({ name: "站点", url: g.url });
    const tokens = await Promise.all(
      users.map(async (u) => (await signInWith(store.db, id, { id: u.data.id as number, token: u.accessToken })).token),
    );
    freshProcessState();
    const as = (i: 0 | 1, perMinute = 1000, wait?: number) =>
      callerFor(store.db, bearer(tokens[i] as string), { siteRequestsPerMinute: perMinute, siteBudgetWaitMs: wait })
        .api;
    return { gateway: g, as };
  }

  it("serves the accounts waiting for one site in turn: one account's burst does not go first", async () => {
    const { as, gateway } = await twoAccounts({ latencyMs: 120 });
    await as(0).account.summary({}); // the status probe, out of the way
    const done: string[] = [];
    const burst = Array.from({ length: 16 }, (_, i) =>
      as(0)
        .account.logs({ page: i + 1, pageSize: 5 })
        .then(() => done.push("a")),
    );
    // The burst fills the site's places first (four calls in flight), then the other account asks.
    while (gateway.inFlight() < 4) await new Promise((r) => setImmediate(r));
    const single = as(1)
      .account.logs({ page: 1, pageSize: 5 })
      .then(() => done.push("b"));
    await Promise.all([...burst, single]);
    // Four of the burst were in flight; the other account's one call went with the next free place.
    expect(done.indexOf("b")).toBeLessThanOrEqual(8);
  });

  it("gives one account at most half of a site's budget a minute while another wants it, so the other still has the rest", async () => {
    // The shares are of a clock minute: the test does not straddle one's end.
    await freshRateWindow();
    const { as } = await twoAccounts();
    // The other account read the site this minute: it wants the budget too.
    expect((await as(1, 12, 5000).account.logs({ page: 1, pageSize: 5 })).success).toBe(true);
    const answers = await Promise.all(
      Array.from({ length: 14 }, (_, i) => as(0, 12, 5000).account.logs({ page: i + 1, pageSize: 5 })),
    );
    // A budget of 12: the account may send 6 a minute (the status probe is the site's, not the account's).
    expect(answers.filter((x) => x.success)).toHaveLength(6);
    const refusals = answers.flatMap((x) => (x.success ? [] : [x.message]));
    // Told when its share is whole again: at the next minute.
    expect(refusals.some((m) => /^该账户的站点请求过于频繁，请 \d{1,2} 秒后再试$/.test(m))).toBe(true);
    expect((await as(1, 12, 5000).account.logs({ page: 2, pageSize: 5 })).success).toBe(true);
  });

  it("lets an account alone on its site use the whole budget, refusing only what the budget cannot hold", async () => {
    await freshRateWindow();
    const { as } = await twoAccounts();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => as(0, 12, 5000).account.logs({ page: i + 1, pageSize: 5 })),
    );
    // A budget of 12, one call of it the status probe's: 11 pages answered; the rest waited past
    // the 5 s allowed and were told the site is busy, never that the account asked too much.
    const refused = answers.flatMap((x) => (x.success ? [] : [x.message]));
    expect(answers.filter((x) => x.success).length).toBeGreaterThanOrEqual(11);
    expect(refused.length).toBeGreaterThan(0);
    for (const message of refused) expect(message).toMatch(SITE_BUSY);
  });
});

describe("a throttled site", () => {
  it("answers 站点繁忙 on a 429 and calls the site no more while it backs off", async () => {
    // Sign-in, the status probe, then the summary's three reads side by side: one or both of the
    // last two are refused (the second may not have left before the first 429 paused the site).
    const s = await site({ rateLimit: { max: 3, windowMs: 60_000 } });
    const first = await s.call().account.summary({});
    expect(first).toEqual({ success: false, message: expect.stringMatching(SITE_BUSY) as unknown });
    expect([1, 2]).toContain(s.gateway.throttled());
    // The summary answers at its first failure; its other reads may still be on their way.
    await new Promise((r) => setTimeout(r, 300));
    const seen = s.gateway.requests.length;
    expect(await s.call().account.logs({ refresh: true })).toEqual({
      success: false,
      message: expect.stringMatching(SITE_BUSY) as unknown,
    });
    expect(await s.call().account.tokens({})).toEqual({
      success: false,
      message: expect.stringMatching(SITE_BUSY) as unknown,
    });
    expect(s.gateway.requests.length).toBe(seen);
  });

  it("reads Retry-After as seconds or as a date, else pauses 10 s", () => {
    const now = 1_000_000;
    expect(pauseSite(9001, "30", now)).toBe(30_000);
    expect(pauseSite(9002, new Date(now + 45_000).toUTCString(), now)).toBe(45_000);
    expect(pauseSite(9003, null, now)).toBe(10_000);
    expect(pauseSite(9004, "soon", now)).toBe(10_000);
  });
});

describe("what the gates keep as the deployment grows", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("forgets the gate of a site no longer called once its calls left the window; keeps a paused one", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const sites = Array.from({ length: 300 }, (_, i) => 20_000 + i);
    await Promise.all(
      sites.map((id) => throughGate(id, { perMinute: 60, background: true }, () => Promise.resolve(id))),
    );
    pauseSite(30_000, "600");
    expect(gatesKept()).toBe(301);
    // Within the window their calls still count: kept.
    vi.setSystemTime(Date.now() + 30_000);
    await throughGate(30_001, { perMinute: 60 }, () => Promise.resolve(0));
    expect(gatesKept()).toBe(302);
    // Past it a new site's first call finds them idle (30,001's call too, 61 s old): the paused
    // site and the one called now stay.
    vi.setSystemTime(Date.now() + 31_000);
    await throughGate(30_002, { perMinute: 60 }, () => Promise.resolve(0));
    expect(gatesKept()).toBe(3);
    vi.setSystemTime(Date.now() + 61_000);
    await throughGate(30_003, { perMinute: 60 }, () => Promise.resolve(0));
    expect(gatesKept()).toBe(2);
  });

  it("gives series of their own to the first 200 sites of the metrics, the rest counted as other", async () => {
    const sites = Array.from({ length: 250 }, (_, i) => 40_000 + i);
    await Promise.all(sites.map((id) => throughGate(id, { perMinute: 60 }, () => Promise.resolve(id))));
    const text = await metrics().registry.metrics();
    const labels = new Set([...text.matchAll(/^gd_site_budget_wait_seconds_count\{site="([^"]+)"/gm)].map((m) => m[1]));
    expect(labels.size).toBeLessThanOrEqual(201);
    expect(labels.has("other")).toBe(true);
    expect(text).toMatch(/gd_site_budget_wait_seconds_count\{site="other",kind="live"\} \d+/);
  });
});

describe("a failing site", () => {
  let fault: ((req: IncomingMessage, res: ServerResponse) => boolean) | null = null;
  const intercept = (req: IncomingMessage, res: ServerResponse) => fault?.(req, res) ?? false;
  const onLogs = (answer: (res: ServerResponse) => void) => (req: IncomingMessage, res: ServerResponse) => {
    if (!(req.url ?? "").startsWith("/api/log/self?")) return false;
    answer(res);
    return true;
  };
  afterEach(() => {
    fault = null;
  });

  const cases: [string, (res: ServerResponse) => void, string][] = [
    [
      "an HTML error page",
      (res) => {
        res.writeHead(502, { "Content-Type": "text/html" });
        res.end("<html>Bad Gateway</html>");
      },
      "站点请求失败: 站点返回的不是 JSON（HTTP 502）",
    ],
    [
      "a database error with JSON",
      (res) => {
        res.writeHead(500, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ success: false, message: "查询日志失败" }));
      },
      "站点请求失败: 查询日志失败",
    ],
    [
      "a refusal with HTTP 401",
      (res) => {
        res.writeHead(401, { "Content-Type": "application/json" });
        res.end(
          JSON.stringify({ success: false, message: "Unauthorized, New-Api-User does not match logged in user" }),
        );
      },
      "站点拒绝了访问令牌，请重新登录",
    ],
    [
      "an English refusal with HTTP 200",
      (res) => {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ success: false, message: "Unauthorized, invalid access token" }));
      },
      "站点拒绝了访问令牌，请重新登录",
    ],
    [
      "an answer of an unknown shape",
      (res) => {
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ success: true, data: { rows: [] } }));
      },
      "站点请求失败: 站点返回的数据无法识别",
    ],
    [
      "a redirect",
      (res) => {
        res.writeHead(302, { Location: "http://169.254.169.254/" });
        res.end();
      },
      "站点请求失败: 站点返回了重定向",
    ],
  ];

  it.each(cases)("says so for %s", async (_name, answer, message) => {
    const s = await site({ intercept });
    fault = onLogs(answer);
    expect(await s.call().account.logs({})).toEqual({ success: false, message });
  });

  it("masks the access token should the site echo it", async () => {
    const s = await site({ intercept });
    fault = onLogs((res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ success: false, message: `查询失败: ${s.user.token}` }));
    });
    expect(await s.call().account.logs({})).toEqual({ success: false, message: "站点请求失败: 查询失败: ***" });
  });

  it("says 连接被拒绝 for a site that went away, and 站点已被移除 for a removed one", async () => {
    const s = await site();
    await s.gateway.close();
    expect(await s.call().account.summary({})).toEqual({ success: false, message: "站点请求失败: 连接被拒绝" });
    await siteRegistry(store.db).remove(s.siteId);
    expect(await s.call().account.summary({})).toEqual({ success: false, message: "登录时所用的站点已被移除" });
  });
});

describe("money settings and families", () => {
  it("shows a CNY site's settings and a custom currency's", async () => {
    const cny = await site({ status: { quota_display_type: "CNY", usd_exchange_rate: 7.2, quota_per_unit: 250_000 } });
    const answer = await cny.call().account.summary({});
    expect(answer.success && answer.data.money).toEqual({
      quotaPerUnit: 250_000,
      display: "CNY",
      symbol: "¥",
      rate: 7.2,
    });
    const quota = cny.history.totals.quota;
    expect(answer.success && answer.data.balance).toEqual({ quota, usd: Math.round((quota / 250_000) * 1e6) / 1e6 });

    const custom = await site({
      status: { quota_display_type: "CUSTOM", custom_currency_symbol: "€", custom_currency_exchange_rate: 0.9 },
    });
    const c = await custom.call().account.summary({});
    expect(c.success && c.data.money).toEqual({ quotaPerUnit: 500_000, display: "CUSTOM", symbol: "€", rate: 0.9 });
  });

  it("shows raw quota where the site does (display_in_currency false)", async () => {
    const s = await site({ status: { display_in_currency: false } }, "one-hub");
    const answer = await s.call().account.summary({});
    expect(answer.success && answer.data.money).toEqual({
      quotaPerUnit: 500_000,
      display: "TOKENS",
      symbol: "",
      rate: 1,
    });
  });

  it("reads a site of an unknown family with new-api rules", async () => {
    const unknown = await startGateway({
      family: "new-api",
      users: [],
      intercept: (req, res) => {
        if (req.url !== "/api/status") return false;
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ success: true, data: { version: "v9", system_name: "某网关" } }));
        return true;
      },
    });
    open.push(unknown);
    const s = await site();
    // The same account's data, served behind an unrecognised status page.
    await siteRegistry(store.db).saveProfile(s.siteId, {
      family: "unknown",
      version: null,
      systemName: null,
      money: { quotaPerUnit: 500_000, display: "USD", symbol: "$", rate: 1 },
    });
    const answer = await s.call().account.logs({ pageSize: 5 });
    expect(answer.success && answer.data.items).toHaveLength(5);
    const { probeSite } = await import("../../src/server/sites/probe");
    const { id } = await siteRegistry(store.db).add({ name: "未知", url: unknown.url });
    expect((await probeSite(store.db, id, { timeoutMs: 1000, perMinute: 10 })).family).toBe("unknown");
  });
});
