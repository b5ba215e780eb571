import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StandInFamily, StandInLog } from "../../src/demo/gateway";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempStore, type TempDb } from "../support/db";
import { FAMILY_LIST, startFamilySite, type FamilySite } from "../support/families";
import { request, signInOverHttp, type HttpSession } from "../support/http";
import { startApp, type RunningApp } from "../support/server";

/**
 * Every gateway family through the REST routes of a running server: the same questions, the
 * answers computed here from the stand-in's own history (not with the service's code).
 */

const TZ = "Asia/Shanghai";
let store: TempDb;
let app: RunningApp;
const sites = new Map<StandInFamily, FamilySite & { siteId: number; session: HttpSession }>();

beforeAll(async () => {
  store = await tempStore();
  app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    SITE_TIMEOUT_MS: "2000",
    LOGIN_RATE_LIMIT: "0",
    SITE_REQUESTS_PER_MINUTE: "1000",
  });
  const registry = siteRegistry(store.db);
  await Promise.all(
    FAMILY_LIST.map(async (family, i) => {
      const site = await startFamilySite(family, i);
      const { id: siteId } = await registry.add({ name: `${family} 站点`, url: site.gateway.url });
      const session = await signInOverHttp(app.url, { userId: site.user.id, accessToken: site.user.token, siteId });
      sites.set(family, { ...site, siteId, session });
    }),
  );
});
afterAll(async () => {
  await app?.stop();
  await Promise.all([...sites.values()].map((s) => s.gateway.close()));
  await store?.cleanup();
});

const get = (family: StandInFamily, path: string) => {
  const s = sites.get(family)!;
  return request(app.url, path, { headers: { authorization: `Bearer ${s.session.token}` } });
};

/** Newest first as the sites order them: by time, and by id (the array's order) within a second. */
const newestFirst = (logs: StandInLog[]) => [...logs].reverse().sort((a, b) => b.createdAt - a.createdAt);
const iso = (s: number) => new Date(s * 1000).toISOString();
const usd = (quota: number) => Math.round((quota / 500_000) * 1e6) / 1e6;

/** What each family's type number means (gateway-user-api.md §2, §3.4, §4, §5, §6). */
function typeName(family: StandInFamily, n: number): string {
  const shared: Record<number, string> = { 1: "topup", 2: "consume", 3: "manage", 4: "system" };
  if (shared[n]) return shared[n];
  if (n === 5)
    return family === "veloera" ? "system" : family === "new-api" || family === "new-api-legacy" ? "error" : "other";
  if (n === 6 && family === "new-api") return "refund";
  return "other";
}

function expectedItem(family: StandInFamily, l: StandInLog) {
  const seconds = family === "new-api" || family === "new-api-legacy" || family === "veloera";
  return {
    createdAt: iso(l.createdAt),
    type: typeName(family, l.type),
    model: l.model,
    tokenName: l.tokenName,
    quota: l.quota,
    usd: usd(l.quota),
    promptTokens: l.promptTokens,
    completionTokens: l.completionTokens,
    durationMs: seconds ? Math.round(l.durationMs / 1000) * 1000 : l.durationMs,
    stream: l.stream,
    content: l.content,
    // What the family adds (ratios, group, request id) is checked in usage-log.test.ts.
    detail: expect.any(Object) as unknown,
    // Each charge recomputed from its ratios (charge-check.test.ts): the stand-ins charge as the
    // gateways do (one-hub's float ceiling may land 1 above new-api's rounding); one-api logs none.
    check:
      l.type !== 2
        ? null
        : family === "one-api"
          ? { expected: null, reason: "日志没有记录倍率，无法核对" }
          : { expected: family.endsWith("hub") ? (expect.any(Number) as unknown) : l.quota, ok: true },
  };
}

/** Local midnight in Asia/Shanghai (UTC+8, no daylight saving). */
function shanghaiMidnight(now = Date.now()): number {
  const local = now + 8 * 3_600_000;
  return (local - (local % 86_400_000) - 8 * 3_600_000) / 1000;
}

describe.each(FAMILY_LIST)("%s site", (family) => {
  it("detects the family and reads the summary: balance, used, requests, today's spend", async () => {
    const s = sites.get(family)!;
    const res = await get(family, `/api/account/summary?tz=${encodeURIComponent(TZ)}`);
    expect(res.status).toBe(200);
    const data = (res.body as { data: Record<string, unknown> }).data;
    const from = shanghaiMidnight();
    const todayLogs = s.history.logs.filter((l) => l.type === 2 && l.createdAt >= from);
    const today = todayLogs.reduce((a, l) => a + l.quota, 0);
    expect(res.body.success).toBe(true);
    const { fetchedAt, ...rest } = data;
    expect(fetchedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(rest).toEqual({
      site: { id: s.siteId, name: `${family} 站点`, url: s.gateway.url, family },
      user: { id: s.user.id, username: `user-${family}`, displayName: `${family} 用户`, group: "default" },
      money: { quotaPerUnit: 500_000, display: "USD", symbol: "$", rate: 1 },
      balance: { quota: s.history.totals.quota, usd: usd(s.history.totals.quota) },
      used: { quota: s.history.totals.usedQuota, usd: usd(s.history.totals.usedQuota) },
      requestCount: s.history.totals.requestCount,
      today: { quota: today, usd: usd(today) },
      // one-api pages carry no total: it cannot count today's requests.
      todayRequests: family === "one-api" ? null : todayLogs.length,
    });
  });

  it("pages the usage log newest first, 20 a page on every family, with the family's total", async () => {
    const s = sites.get(family)!;
    const all = newestFirst(s.history.logs);
    const size = 20;
    for (const page of [1, 2]) {
      const res = await get(family, `/api/account/logs?page=${page}&pageSize=20`);
      const data = (res.body as { data: Record<string, unknown> }).data;
      expect(res.body.success).toBe(true);
      expect(data.items).toEqual(all.slice((page - 1) * size, page * size).map((l) => expectedItem(family, l)));
      expect(data.page).toBe(page);
      expect(data.pageSize).toBe(size);
      expect(data.total).toBe(family === "one-api" ? null : all.length);
      expect(data.hasMore).toBe(true);
    }
  });

  it.runIf(family === "one-api")(
    "serves any page size from one-api's pages of 10, reading only the pages it needs",
    async () => {
      const s = sites.get(family)!;
      const all = newestFirst(s.history.logs);
      const before = s.gateway.requests.length;
      // Page 2 of 25 is entries 25–49: the site's pages 3 to 5, the first and last cut.
      const res = await get(family, "/api/account/logs?page=2&pageSize=25&refresh=1");
      const data = (res.body as { data: Record<string, unknown> }).data;
      expect(data.items).toEqual(all.slice(25, 50).map((l) => expectedItem(family, l)));
      expect([data.pageSize, data.hasMore]).toEqual([25, true]);
      const read = s.gateway.requests.slice(before).filter((r) => r.path === "/api/log/self");
      expect(read.map((r) => new URLSearchParams(r.query).get("p"))).toEqual(["2", "3", "4"]);
    },
  );

  it("names every log type the family writes (5 and 6 differ by family)", async () => {
    const s = sites.get(family)!;
    const all = newestFirst(s.history.logs);
    const size = 100;
    for (const type of [1, 3, 5]) {
      const index = all.findIndex((l) => l.type === type);
      expect(index).toBeGreaterThanOrEqual(0);
      const page = Math.floor(index / size) + 1;
      const res = await get(family, `/api/account/logs?page=${page}&pageSize=100`);
      const items = (res.body as { data: { items: unknown[] } }).data.items;
      expect(items[index % size]).toEqual(expectedItem(family, all[index]!));
    }
  });

  it("filters the log by type, model, token and time range", async () => {
    const s = sites.get(family)!;
    const from = Math.floor(Date.now() / 1000) - 7 * 86_400;
    const to = Math.floor(Date.now() / 1000) - 2 * 86_400;
    const want = newestFirst(s.history.logs).filter(
      (l) =>
        l.type === 2 &&
        l.model === "gpt-4o-mini" &&
        l.tokenName === "生产服务器" &&
        l.createdAt >= from &&
        l.createdAt <= to,
    );
    expect(want.length).toBeGreaterThan(3);
    const q = new URLSearchParams({
      type: "consume",
      model: "gpt-4o-mini",
      token: "生产服务器",
      from: String(from),
      to: String(to),
      pageSize: "100",
    });
    const res = await get(family, `/api/account/logs?${q}`);
    const data = (res.body as { data: Record<string, unknown> }).data;
    expect(data.items).toEqual(want.slice(0, 100).map((l) => expectedItem(family, l)));
    expect(data.total).toBe(family === "one-api" ? null : want.length);
  });

  it("lists tokens with every key masked, whatever the family sends", async () => {
    const s = sites.get(family)!;
    const res = await get(family, "/api/account/tokens?page=1&pageSize=10");
    const data = (res.body as { data: { items: Record<string, unknown>[]; total: number | null } }).data;
    const tokens = [...s.history.tokens].sort((a, b) => b.id - a.id);
    expect(data.items.map((t) => [t.id, t.name, t.key, t.status, t.unlimited, t.expiresAt, t.usedQuota])).toEqual(
      tokens.map((t) => [
        t.id,
        t.name,
        `${t.key.slice(0, 4)}****${t.key.slice(-4)}`,
        ["", "enabled", "disabled", "expired", "exhausted"][t.status],
        t.unlimited,
        t.expiredTime === -1 ? null : iso(t.expiredTime),
        t.usedQuota,
      ]),
    );
    const text = JSON.stringify(res.body);
    for (const t of s.history.tokens) expect(text).not.toContain(t.key);
  });

  it("lists top-ups where the family has them, and says so where it has not", async () => {
    const s = sites.get(family)!;
    const res = await get(family, "/api/account/topups");
    const data = (res.body as { data: { supported: boolean; items: Record<string, unknown>[] } }).data;
    if (family !== "new-api") {
      expect(data).toMatchObject({ supported: false, items: [], total: 0, hasMore: false });
      return;
    }
    const since = Date.now() / 1000 - 30 * 86_400;
    const want = s.history.topups.filter((t) => t.createTime >= since).sort((a, b) => b.id - a.id);
    expect(want.length).toBeGreaterThan(0);
    expect(data.supported).toBe(true);
    expect(data.items).toEqual(
      want.map((t) => ({
        createdAt: iso(t.createTime),
        completedAt: iso(t.completeTime),
        amountUsd: t.amount,
        money: t.money,
        method: t.paymentMethod,
        status: t.status,
        tradeNo: t.tradeNo,
      })),
    );
  });

  it("only ever asks the site's canonical paths (no 301 taken)", () => {
    const s = sites.get(family)!;
    const paths = new Set(s.gateway.requests.map((r) => r.path));
    for (const p of paths) {
      expect([
        "/api/status",
        "/api/user/self",
        "/api/log/self",
        "/api/log/self/stat",
        "/api/token/",
        "/api/user/topup/self",
      ]).toContain(p);
    }
  });
});

describe("bad parameters", () => {
  const cases: [string, string][] = [
    ["pageSize=101", "每页条数超出范围（参数 pageSize）"],
    ["pageSize=0", "每页条数超出范围（参数 pageSize）"],
    ["page=10001", "页码超出范围（参数 page）"],
    ["page=abc", "页码无效（参数 page）"],
    ["type=bogus", "日志类型无效（参数 type）"],
    [`model=${"m".repeat(129)}`, "模型太长（参数 model）"],
    [`token=${"t".repeat(129)}`, "令牌名太长（参数 token）"],
    ["from=2026-01-01&to=2025-01-01", "结束日期不能早于开始日期（参数 to）"],
    ["from=2024-01-01&to=2026-04-01", "日期范围最长 800 天（参数 to）"],
    ["from=2026-11-01T10:00:00Z", "开始日期无效（参数 from）"],
    ["from=yesterday", "开始日期无效（参数 from）"],
    ["refresh=maybe", "刷新参数无效（参数 refresh）"],
  ];
  it.each(cases)("logs?%s answers %s and asks the site nothing", async (query, message) => {
    const s = sites.get("new-api")!;
    const before = s.gateway.requests.length;
    const res = await get("new-api", `/api/account/logs?${query}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: false, message });
    expect(s.gateway.requests.length).toBe(before);
  });

  it("a bad time zone is named", async () => {
    const res = await get("new-api", "/api/account/summary?tz=Mars/Olympus");
    expect(res.body).toEqual({ success: false, message: "时区无效（参数 tz）" });
  });

  it("tokens and top-ups check their paging too", async () => {
    expect((await get("new-api", "/api/account/tokens?pageSize=500")).body).toEqual({
      success: false,
      message: "每页条数超出范围（参数 pageSize）",
    });
    expect((await get("new-api", "/api/account/topups?page=0")).body).toEqual({
      success: false,
      message: "页码超出范围（参数 page）",
    });
  });
});

describe("sessions", () => {
  it("answers 401 without a session, and works with the cookie as with Bearer", async () => {
    for (const path of ["summary", "logs", "tokens", "topups"]) {
      const res = await request(app.url, `/api/account/${path}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, message: "未登录或登录已过期" });
    }
    const s = sites.get("one-hub")!;
    const res = await request(app.url, "/api/account/summary", { headers: { cookie: s.session.cookie } });
    expect(res.body.success).toBe(true);
  });

  it("a second identical request within the cache time is not sent to the site; refresh=1 is", async () => {
    const s = sites.get("veloera")!;
    await get("veloera", "/api/account/tokens?page=1&pageSize=7");
    const before = s.gateway.requests.length;
    const again = await get("veloera", "/api/account/tokens?page=1&pageSize=7");
    expect(again.body.success).toBe(true);
    expect(s.gateway.requests.length).toBe(before);
    await get("veloera", "/api/account/tokens?page=1&pageSize=7&refresh=1");
    expect(s.gateway.requests.length).toBe(before + 1);
  });

  it("a user the site has since banned gets 站点拒绝了访问令牌，请重新登录", async () => {
    const s = sites.get("one-api")!;
    s.user.data.status = 2;
    try {
      const res = await get("one-api", "/api/account/summary?refresh=1");
      expect(res.body).toEqual({ success: false, message: "站点拒绝了访问令牌，请重新登录" });
    } finally {
      s.user.data.status = 1;
    }
  });

  it("never sends the session token or the cookie to the site; sends the site token and user id", () => {
    const s = sites.get("new-api")!;
    const self = s.gateway.requests.filter((r) => r.path === "/api/log/self");
    expect(self.length).toBeGreaterThan(0);
    for (const r of self) {
      expect(r.headers.authorization).toBe(s.user.token);
      expect(r.headers["new-api-user"]).toBe(String(s.user.id));
      expect(r.headers.cookie).toBeUndefined();
      expect(JSON.stringify(r.headers)).not.toContain(s.session.token);
    }
  });
});
