import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { IncomingMessage, ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway } from "../../src/demo/gateway";
import { ledgerStore, type EntryRow } from "../../src/server/ledger/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { request, signInOverHttp } from "../support/http";
import { startApp, type RunningApp } from "../support/server";
import { tempStore, type TempDb } from "../support/db";

/**
 * Sites that send what no real gateway would (the third security round): the production server
 * keeps running, its memory bounded, and says what it refused.
 */

const USER = { id: 7, token: "hostile-site-token-0123456789" };
const NOW = Math.floor(Date.now() / 1000);

/** What the hostile site's `/api/log/self` answers; `null`: the stand-in's own (empty) log. */
let logs: ((q: URLSearchParams) => unknown) | null = null;
/** What its `/api/user/self` says of the balance. */
let self: Record<string, unknown> = {};

function intercept(req: IncomingMessage, res: ServerResponse): boolean {
  const url = new URL(req.url ?? "/", "http://x");
  if (url.pathname === "/api/log/self" && logs) {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ success: true, message: "", data: logs(url.searchParams) }));
    return true;
  }
  if (url.pathname === "/api/user/self" && Object.keys(self).length > 0) {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ success: true, message: "", data: newApiUser(USER.id, self) }));
    return true;
  }
  return false;
}

/** One new-api log row. */
const row = (at: number, extra: Record<string, unknown> = {}) => ({
  id: 0,
  user_id: USER.id,
  created_at: at,
  type: 2,
  model_name: "gpt-4o",
  token_name: "default",
  quota: 1000,
  prompt_tokens: 10,
  completion_tokens: 5,
  use_time: 1,
  is_stream: false,
  content: "",
  ...extra,
});

let store: TempDb;
let site: RunningGateway;
let app: RunningApp;
let siteId: number;
let auth: Record<string, string>;

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;

beforeAll(async () => {
  store = await tempStore();
  site = await startGateway({
    family: "new-api",
    users: [{ accessToken: USER.token, data: newApiUser(USER.id, { username: "hostile" }) }],
    intercept,
  });
  siteId = (await siteRegistry(store.db).add({ name: "恶意站点", url: site.url })).id;
  app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    LEDGER_SYNC_MINUTES: "0",
    LOGIN_RATE_LIMIT: "0",
    // The site's budget out of the way: what bounds the damage must be the service's own limits.
    SITE_REQUESTS_PER_MINUTE: "100000",
    ACCOUNT_READS_PER_MINUTE: "100000",
  });
  const { token } = await signInOverHttp(app.url, { userId: USER.id, accessToken: USER.token, siteId });
  auth = { authorization: `Bearer ${token}` };
}, 60_000);

afterAll(async () => {
  await app?.stop();
  await site?.close();
  await store?.cleanup();
});

type Status = {
  running: boolean;
  entries: number;
  lastError: string | null;
  skipped: { count: number; reason: string | null };
};

const statusNow = async () => (await request(app.url, "/api/usage/status", { headers: auth })).body.data as Status;

/** Starts a sync of the account's ledger and waits for it to end (its status to change and settle). */
async function syncAndWait(): Promise<Status> {
  const seen = (s: Status) =>
    JSON.stringify([s.entries, s.lastError, s.skipped, (s as { syncedAt?: unknown }).syncedAt]);
  const before = seen(await statusNow());
  await request(app.url, "/api/usage/sync", { method: "POST", headers: auth });
  for (let i = 0; i < 300; i++) {
    const status = await statusNow();
    if (!status.running && seen(status) !== before) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the sync did not end");
}

describe("a hostile site and the ledger's sync", () => {
  it("refuses a second that never ends (full pages of 2 KB entries, total 1e9), the server's memory bounded", async () => {
    const content = "x".repeat(2000);
    logs = (q) => {
      const size = Number(q.get("page_size") ?? 10);
      const at = Number(q.get("start_timestamp") ?? NOW);
      return { page: 1, page_size: size, total: 1e9, items: Array.from({ length: size }, () => row(at, { content })) };
    };
    const before = rssMb(app.pid);
    const status = await syncAndWait();
    const after = rssMb(app.pid);
    console.log(`crowded-second site: RSS ${Math.round(before)} → ${Math.round(after)} MB; ${JSON.stringify(status)}`);
    expect(status.lastError).toContain("站点返回的日志多次超出合理范围");
    expect(status.skipped.count).toBeGreaterThan(0);
    expect(status.skipped.reason).toContain("同一秒内的日志超过 2000 条");
    expect(status.entries).toBe(0);
    expect(after - before).toBeLessThan(100);
    expect((await request(app.url, "/api/auth/me", { headers: auth })).status).toBe(200);
  }, 60_000);

  it("refuses a second whose pages go on past the total the site itself gave", async () => {
    logs = (q) => {
      const size = Number(q.get("page_size") ?? 10);
      const at = Number(q.get("start_timestamp") ?? NOW);
      return { page: 1, page_size: size, total: 150, items: Array.from({ length: size }, () => row(at)) };
    };
    const status = await syncAndWait();
    expect(status.skipped.reason).toContain("同一秒内的日志超过");
    expect((await request(app.url, "/api/auth/me", { headers: auth })).status).toBe(200);
  }, 60_000);

  it("skips and counts entries with impossible times or numbers, keeps the rest, and serves the live log", async () => {
    const fine = [row(NOW - 600, { model_name: "kept-1" }), row(NOW - 300, { model_name: "kept-2", quota: 5e9 })];
    const bad = [row(1e13), row(NOW - 200, { quota: 1e308 }), row(NOW - 100, { prompt_tokens: 1.5 })];
    logs = (q) => {
      const from = Number(q.get("start_timestamp") ?? 0);
      const to = Number(q.get("end_timestamp") ?? Infinity);
      // The far-future entry is in every answer, whatever the window (a site that ignores it).
      const items = [...fine.filter((r) => r.created_at >= from && r.created_at <= to), ...bad];
      return { page: 1, page_size: 100, total: items.length, items };
    };
    self = { quota: 1e308, used_quota: 12, request_count: 3 };
    // The live log answers (no HTTP 500), the impossible time as null.
    const live = await request(app.url, "/api/account/logs?pageSize=100&refresh=1", { headers: auth });
    expect(live.status).toBe(200);
    const items = (live.body.data as { items: Array<{ createdAt: string | null; model: string }> }).items;
    expect(items.filter((i) => i.createdAt === null)).toHaveLength(1);

    const before = await store.db.ledgerSync.findFirst({ select: { skipped: true } });
    const status = await syncAndWait();
    expect(status.lastError).toBeNull();
    // The two sane entries are kept, 5e9 (past 32 bits) exactly; the far-future one, 1e308 and 1.5 are refused.
    const kept = await store.db.ledgerEntry.findMany({ select: { model: true, quota: true }, orderBy: { at: "asc" } });
    expect(kept.map((k) => [k.model, Number(k.quota)])).toEqual([
      ["kept-1", 1000],
      ["kept-2", 5e9],
    ]);
    expect(status.skipped.count - (before?.skipped ?? 0)).toBeGreaterThanOrEqual(3);
    // The balance of 1e308 is no snapshot; the sync went on.
    expect(await store.db.balanceSnapshot.count({ where: { quota: { gt: BigInt(Number.MAX_SAFE_INTEGER) } } })).toBe(0);
    self = {};
  }, 60_000);
});

/** `n` GETs of the account's log, `parallel` at a time, page 1..n (each a distinct cached answer). */
async function distinctLogPages(n: number, parallel = 8): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        const page = ++next;
        const res = await fetch(`${app.url}/api/account/logs?page=${page}&pageSize=100`, { headers: auth });
        await res.arrayBuffer();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
    }),
  );
  return statuses;
}

describe("a hostile site's user object", () => {
  it("keeps a bounded copy with every session (depth, length, size), the fields the dashboard reads intact", async () => {
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < 50; i++) deep = { deeper: deep };
    self = {
      username: "hostile",
      display_name: "恶意用户",
      quota: 123_456,
      pad: "x".repeat(900_000),
      list: Array.from({ length: 5000 }, (_, i) => i),
      deep,
      permissions: { sidebar_settings: true, sidebar_modules: { admin: false } },
    };
    try {
      const tokens: string[] = [];
      for (let i = 0; i < 20; i++) {
        tokens.push((await signInOverHttp(app.url, { userId: USER.id, accessToken: USER.token, siteId })).token);
      }
      const stored = await store.db.session.findMany({ select: { userInfo: true } });
      const largest = Math.max(...stored.map((r) => r.userInfo.length));
      console.log(`1 MB user object: the largest stored copy is ${largest} characters`);
      expect(largest).toBeLessThanOrEqual(16 * 1024);
      const me = await fetch(`${app.url}/api/auth/me`, { headers: { authorization: `Bearer ${tokens[0]}` } });
      const text = await me.text();
      expect(text.length).toBeLessThan(20 * 1024);
      const info = (JSON.parse(text) as { data: { userInfo: Record<string, unknown> } }).data.userInfo;
      expect(info).toMatchObject({ id: USER.id, username: "hostile", display_name: "恶意用户", quota: 123_456 });
    } finally {
      self = {};
    }
  }, 60_000);

  it("passes an ordinary user object through as it came, nested permissions included", async () => {
    self = { username: "hostile", permissions: { sidebar_settings: true, sidebar_modules: { admin: false } } };
    try {
      const res = await request(app.url, "/api/auth/login", {
        body: { userId: USER.id, accessToken: USER.token, siteId },
      });
      const info = (res.body.data as { userInfo: Record<string, unknown> }).userInfo;
      expect(info).toEqual(newApiUser(USER.id, self));
    } finally {
      self = {};
    }
  });
});

describe("a hostile site and the live-data cache", () => {
  it("keeps no site text at any length: 1 MB model names in every page leave the memory flat", async () => {
    const huge = "m".repeat(1_000_000);
    logs = (q) => ({
      page: Number(q.get("p")),
      page_size: 100,
      total: 1e6,
      items: [row(NOW - 60, { model_name: huge })],
    });
    const before = rssMb(app.pid);
    expect(await distinctLogPages(400)).toEqual(new Map([[200, 400]]));
    const after = rssMb(app.pid);
    console.log(`1 MB model names, 400 pages: RSS ${Math.round(before)} → ${Math.round(after)} MB`);
    expect(after - before).toBeLessThan(80);
    const one = await request(app.url, "/api/account/logs?page=1&pageSize=100&refresh=1", { headers: auth });
    const model = (one.body.data as { items: Array<{ model: string }> }).items[0]?.model ?? "";
    expect(model.length).toBe(200);
  }, 120_000);

  it("is bounded by bytes: thousands of distinct pages from an ordinary site leave the memory flat", async () => {
    const content = "说明".repeat(200);
    logs = (q) => {
      const page = Number(q.get("p"));
      return {
        page,
        page_size: 100,
        total: 1e6,
        items: Array.from({ length: 100 }, (_, i) => row(NOW - page * 100 - i, { content, token_name: `t${page}` })),
      };
    };
    await distinctLogPages(200); // warm up
    const before = rssMb(app.pid);
    expect(await distinctLogPages(2500)).toEqual(new Map([[200, 2500]]));
    const after = rssMb(app.pid);
    console.log(`2,500 distinct 100-entry pages: RSS ${Math.round(before)} → ${Math.round(after)} MB`);
    expect(after - before).toBeLessThan(100);
    expect((await request(app.url, "/api/auth/me", { headers: auth })).status).toBe(200);
  }, 180_000);
});

describe("the PDF statement of a month with 20,000 token names", () => {
  it("sums the tokens past the top rows into 其他 and leaves the server up, its memory bounded", async () => {
    const owner = { siteId, siteUserId: USER.id };
    const rows: EntryRow[] = Array.from({ length: 20_000 }, (_, i) => ({
      at: NOW - 7200 - i,
      fingerprint: `t${i}`,
      ordinal: 0,
      type: "consume",
      model: `model-${i % 7}`,
      tokenName: `用户自己起的令牌名-${i}`,
      quota: 1000 + i,
      promptTokens: 10,
      completionTokens: 5,
      durationMs: 100,
      stream: false,
      content: "",
      detail: "",
    }));
    const key = { siteId, siteUserId: BigInt(USER.id) };
    await store.db.ledgerSync.upsert({
      where: { siteId_siteUserId: key },
      create: { ...key, holder: "test" },
      update: { holder: "test" },
    });
    expect(await ledgerStore(store.db).commit(owner, rows, "test", NOW)).toBe(true);
    await store.db.ledgerSync.updateMany({ where: { siteId }, data: { holder: null } });
    const month = new Date(NOW * 1000).toISOString().slice(0, 7);
    const before = rssMb(app.pid);
    const res = await fetch(`${app.url}/api/export/statement.pdf?month=${month}&tz=UTC`, { headers: auth });
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    const after = rssMb(app.pid);
    const dir = mkdtempSync(path.join(tmpdir(), "gd-pdf-"));
    try {
      writeFileSync(path.join(dir, "s.pdf"), bytes);
      const text = execFileSync("pdftotext", ["-layout", path.join(dir, "s.pdf"), "-"]).toString();
      const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync("pdfinfo", [path.join(dir, "s.pdf")]).toString())?.[1]);
      console.log(
        `statement of 20,000 tokens: ${bytes.length} bytes, ${pages} pages; RSS ${Math.round(before)} → ${Math.round(after)} MB`,
      );
      // 20,000 token names (and the one the other tests left): 29 rows and the rest in one.
      expect(text).toMatch(/其他（1997[1-9] 项）/);
      expect(text).toMatch(/第\s*1\s*页/);
      expect(pages).toBeLessThan(10);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(after - before).toBeLessThan(100);
    expect((await request(app.url, "/api/auth/me", { headers: auth })).status).toBe(200);
  }, 60_000);
});
