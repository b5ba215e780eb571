import type { IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountOf } from "../../src/server/accounts/overview";
import { syncLedger } from "../../src/server/ledger/sync";
import { sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";
import { startFamilySite, type FamilySite } from "../support/families";
import { request } from "../support/http";
import { startApp, type RunningApp } from "../support/server";

/**
 * The overview of every account in one browser, against three stand-in sites of different
 * families: one answers (showing money in CNY), one refuses the token, one hangs.
 */

const TIMEOUT_MS = 1500;
let store: TempDb;
let app: RunningApp;
let good: FamilySite;
let refusing: FamilySite;
let hanging: FamilySite;
let cookie = "";
const tokens: Record<string, string> = {};
const siteIds: Record<string, number> = {};

/** The hanging site answers sign-in, then nothing else. */
const hangAfterSignIn = (req: IncomingMessage) => !(req.url ?? "").startsWith("/api/user/self");

beforeAll(async () => {
  store = await tempStore();
  [good, refusing, hanging] = await Promise.all([
    startFamilySite("new-api", 0, { status: { quota_display_type: "CNY", usd_exchange_rate: 7.2 } }),
    startFamilySite("one-hub", 1),
    startFamilySite("one-api", 2, { intercept: (req) => hangAfterSignIn(req) }),
  ]);
  app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    LOGIN_RATE_LIMIT: "0",
    SITE_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  const registry = siteRegistry(store.db);
  for (const [name, s] of [
    ["挂起站", hanging],
    ["拒绝站", refusing],
    ["人民币站", good],
  ] as const) {
    const { id } = await registry.add({ name, url: s.gateway.url });
    siteIds[name] = id;
    const res = await request(app.url, "/api/auth/login", {
      body: { userId: s.user.id, accessToken: s.user.token, siteId: id },
      headers: cookie ? { cookie } : {},
    });
    expect(res.body.success).toBe(true);
    tokens[name] = (res.body.data as { sessionToken: string }).sessionToken;
    cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
  }
  // The one-hub user is banned after signing in: the site now refuses the token.
  refusing.user.data.status = 2;
});
afterAll(async () => {
  await app?.stop();
  await Promise.all([good, refusing, hanging].map((s) => s?.gateway.close()));
  await store?.cleanup();
});

type Row = {
  key: string;
  active: boolean;
  site: { name: string } | null;
  userId: number;
  state: string;
  message: string | null;
  summary: { balance: { quota: number; usd: number }; today: { quota: number }; money: { display: string } } | null;
  daysLeft: number | null;
  lastKnown: { balance: { quota: number; usd: number }; at: string } | null;
};
type Overview = { rows: Row[]; totals: Record<string, number | string | null> };

describe("GET /api/accounts/overview", () => {
  it("shows every account with its state; the hanging site costs its row the time limit, no more", async () => {
    const started = Date.now();
    const res = await request(app.url, "/api/accounts/overview?tz=Asia%2FShanghai", { headers: { cookie } });
    const elapsed = Date.now() - started;
    expect(res.status).toBe(200);
    const { rows, totals } = (res.body as { data: Overview }).data;
    expect(rows.map((r) => [r.site?.name, r.active, r.state, r.message])).toEqual([
      ["人民币站", true, "ok", null],
      ["拒绝站", false, "refused", "站点拒绝了访问令牌，请重新登录"],
      ["挂起站", false, "unreachable", "站点请求失败: 连接超时"],
    ]);
    // Side by side: about one time limit (the probe and the reads of the hanging site run together).
    expect(elapsed).toBeLessThan(TIMEOUT_MS * 2 + 1000);
    const ok = rows[0]!;
    const quota = good.history.totals.quota;
    expect(ok.summary?.balance).toEqual({ quota, usd: Math.round((quota / 500_000) * 1e6) / 1e6 });
    expect(ok.summary?.money.display).toBe("CNY");
    // The total is in USD, and says one account was converted from another display currency.
    expect(totals).toEqual({
      balanceUsd: ok.summary?.balance.usd,
      todayUsd: expect.any(Number) as number,
      todayRequests: expect.any(Number) as number,
      accounts: 1,
      convertedAccounts: 1,
      staleAccounts: 0,
      staleSince: null,
    });
    expect(rows.some((r) => r.key === "" || Object.values(tokens).some((t) => t.includes(r.key)))).toBe(false);
  });

  it("a row fills in as its site answers: the answering site's row does not wait for the hanging one", async () => {
    const list = await request(app.url, "/api/trpc/account.list", { headers: { cookie } });
    const accounts = (list.body as { result: { data: { accounts: Row[] } } }).result.data.accounts;
    const row = async (key: string) => {
      const t = Date.now();
      const input = encodeURIComponent(JSON.stringify({ key, refresh: true }));
      const res = await request(app.url, `/api/trpc/account.overviewRow?input=${input}`, { headers: { cookie } });
      return { ms: Date.now() - t, row: (res.body as { result: { data: Row } }).result.data };
    };
    const [fast, slow] = await Promise.all([
      row(accounts.find((a) => a.site?.name === "人民币站")!.key),
      row(accounts.find((a) => a.site?.name === "挂起站")!.key),
    ]);
    expect(fast.row.state).toBe("ok");
    expect(slow.row.state).toBe("unreachable");
    expect(fast.ms).toBeLessThan(TIMEOUT_MS);
    expect(slow.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 100);
  });

  it("counts a site that cannot be read with the balance its last sync noted, and says from when", async () => {
    const at = Math.floor(Date.now() / 1000) - 12 * 60;
    await store.db.balanceSnapshot.create({
      data: {
        siteId: siteIds["挂起站"]!,
        siteUserId: BigInt(hanging.user.id),
        at,
        quota: 3_000_000n,
        usedQuota: 0n,
        requestCount: 0n,
      },
      select: { at: true },
    });
    const res = await request(app.url, "/api/accounts/overview", { headers: { cookie } });
    const { rows, totals } = (res.body as { data: Overview }).data;
    const byName = (name: string) => rows.find((r) => r.site?.name === name)!;
    const seen = { balance: { quota: 3_000_000, usd: 6 }, at: new Date(at * 1000).toISOString() };
    expect(byName("挂起站")).toMatchObject({ state: "unreachable", summary: null, lastKnown: seen });
    // A token the site refused ended its session at once (docs/design.md 24): an expired row now, with
    // nothing to show, not counted.
    expect(rows.find((r) => r.userId === refusing.user.id)).toMatchObject({ state: "expired", lastKnown: null });
    expect(byName("人民币站").lastKnown).toBeNull();
    const okUsd = byName("人民币站").summary!.balance.usd;
    expect(totals).toMatchObject({
      balanceUsd: Math.round((okUsd + 6) * 1e6) / 1e6,
      accounts: 1,
      staleAccounts: 1,
      staleSince: seen.at,
    });
    // 概览 of that account shows the same figure while its site fails.
    const { api } = callerFor(store.db, bearer(tokens["挂起站"] ?? ""));
    expect((await api.usage.lastBalance()).data).toEqual(seen);
    expect((await callerFor(store.db, bearer(tokens["人民币站"] ?? "")).api.usage.lastBalance()).data).toBeNull();
  });

  it("an account whose session ended elsewhere appears once as expired, then leaves", async () => {
    await request(app.url, "/api/auth/logout", {
      method: "POST",
      headers: { authorization: `Bearer ${tokens["拒绝站"]}` },
    });
    const first = await request(app.url, "/api/accounts/overview", { headers: { cookie } });
    const rows = (first.body as { data: Overview }).data.rows;
    expect(rows.map((r) => r.state)).toEqual(["ok", "unreachable", "expired"]);
    expect(rows[2]).toMatchObject({ userId: refusing.user.id, message: "会话已过期或已在别处退出，请重新登录" });
    cookie = (first.headers.get("set-cookie") ?? cookie).split(";")[0] ?? cookie;
    const again = await request(app.url, "/api/accounts/overview", { headers: { cookie } });
    expect((again.body as { data: Overview }).data.rows.map((r) => r.state)).toEqual(["ok", "unreachable"]);
  });

  it("gives each row the ledger's 预计可用天数: the figure 余额 and 套餐 give for the account", async () => {
    const session = (await sessionStore(store.db).findValid(tokens["人民币站"] ?? ""))!;
    const now = Date.now();
    await syncLedger(
      store.db,
      accountOf(session),
      { db: store.db, timeoutMs: 5000, perMinute: 100_000 },
      { backfillDays: 40, now: Math.floor(now / 1000) },
    );
    const { api } = callerFor(store.db, { cookie });
    const row = (await api.account.overview({ tz: "UTC" })).data.rows.find((r) => r.site?.name === "人民币站")!;
    const today = new Date(now).toISOString().slice(0, 10);
    const balance = (await api.usage.balance({ accounts: "all", from: today, to: today, tz: "UTC" })).data;
    const account = balance.accounts.find((a) => a.userId === good.user.id)!;
    expect(row.daysLeft).not.toBeNull();
    expect(row.daysLeft).toBe(account.daysLeft);
    // Its definition: the balance over the pace of the last 7 × 24 hours, to one decimal.
    expect(Math.abs(row.daysLeft! - account.balanceUsd! / account.burnRateUsd)).toBeLessThan(0.051);
  });
});
