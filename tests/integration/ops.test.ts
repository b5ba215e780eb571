import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { beat } from "../../src/server/core/heartbeat";
import { freshProcessState } from "../../src/server/core/process-state";
import { callerFor } from "../support/caller";
import { storeForAnotherServer, tempStore, type TempDb } from "../support/db";
import { startApp, type RunningApp } from "../support/server";
import { newApiUser, startGateway, type RunningGateway } from "../../src/demo/gateway";
import { siteRegistry } from "../../src/server/sites/registry";
import { request } from "../support/http";

/**
 * /api/health and /api/ready: the process answers; the instance can serve (store reachable,
 * migrated and writable, job runner ticking, heap not full), and says why when it cannot.
 */

describe("readiness in process", () => {
  it("is ready on a migrated store, and says when the runner stopped or a migration is missing", async () => {
    const store = await tempStore();
    try {
      freshProcessState();
      const { api } = callerFor(store.db);
      const ok = await api.ops.ready();
      expect(ok).toMatchObject({ ready: true, reasons: [], checks: { store: "ok" } });
      expect(["ok", "starting"]).toContain(ok.checks.jobs);

      // The runner beat last ten minutes ago: stopped.
      beat("ledger.syncs", Date.now() - 600_000);
      const stale = await api.ops.ready();
      expect(stale.ready).toBe(false);
      expect(stale.reasons).toEqual([expect.stringMatching(/^后台任务已 (599|600|601) 秒没有运行$/) as unknown]);
      beat("ledger.syncs");
      expect((await api.ops.ready()).ready).toBe(true);

      // A migration of this build not applied.
      const [last] = await store.db.$queryRawUnsafe<Array<{ id: string }>>(
        `SELECT "id" FROM "_prisma_migrations" ORDER BY "migration_name" DESC LIMIT 1`,
      );
      await store.db.$executeRawUnsafe(`DELETE FROM "_prisma_migrations" WHERE "id" = '${last?.id ?? ""}'`);
      const behind = await api.ops.ready();
      expect(behind.ready).toBe(false);
      expect(behind.checks.store).toMatch(/^数据库迁移未完成（已应用 (\d+) \/ (\d+)）$/);
    } finally {
      await store.cleanup();
    }
  });
});

describe("over HTTP", () => {
  let store: TempDb;
  let app: RunningApp;
  beforeAll(async () => {
    store = await tempStore();
    app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await store?.cleanup();
  });

  it("answers health and readiness without a session, no-store, nothing secret", async () => {
    const health = await fetch(`${app.url}/api/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok" });
    const ready = await fetch(`${app.url}/api/ready`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("cache-control")).toBe("no-store");
    const body = (await ready.json()) as { ready: boolean; checks: { store: string } };
    expect(body).toMatchObject({ ready: true, checks: { store: "ok" } });
    expect(JSON.stringify(body)).not.toMatch(/file:|postgres:|password/i);
  });
});

describe("metrics and request ids", () => {
  const TOKEN = "metrics-token-0123456789abcdef";
  let store: TempDb;
  let app: RunningApp;
  let bare: RunningApp;
  let site: RunningGateway;
  let siteId: number;
  beforeAll(async () => {
    store = await tempStore();
    site = await startGateway({
      family: "new-api",
      users: [{ accessToken: "sk-metrics-0123456789abcdef", data: newApiUser(71, { username: "m" }), logs: [] }],
    });
    siteId = (await siteRegistry(store.db).add({ name: "指标站", url: site.url })).id;
    app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir, METRICS_TOKEN: TOKEN });
  }, 60_000);
  afterAll(async () => {
    await app?.stop();
    await bare?.stop();
    await site?.close();
    await store?.cleanup();
  });

  it("serves Prometheus' text to the bearer of METRICS_TOKEN only, with requests, site calls, sessions and the process", async () => {
    const login = await request(app.url, "/api/auth/login", {
      body: { siteId, userId: 71, accessToken: "sk-metrics-0123456789abcdef" },
      headers: { "x-request-id": "trace-abc-123" },
    });
    expect(login.body.success).toBe(true);
    expect(login.headers.get("x-request-id")).toBe("trace-abc-123");
    // An id of its own when none (or a bad one) is sent.
    const other = await fetch(`${app.url}/api/health`, { headers: { "x-request-id": "bad id with spaces" } });
    expect(other.headers.get("x-request-id")).toMatch(/^[\w-]{12}$/);

    expect((await fetch(`${app.url}/api/metrics`)).status).toBe(401);
    expect(
      (await fetch(`${app.url}/api/metrics`, { headers: { authorization: "Bearer wrong-token-0123456789" } })).status,
    ).toBe(401);
    const res = await fetch(`${app.url}/api/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const text = await res.text();
    const host = new URL(site.url).host;
    expect(text).toMatch(/gd_http_requests_total\{route="\/api\/auth\/login",method="POST",status="200"\} 1/);
    expect(text).toMatch(
      new RegExp(`gd_site_calls_total\\{site="${host.replace(/\./g, "\\.")}",outcome="2xx"\\} \\d+`),
    );
    expect(text).toMatch(/gd_site_budget_wait_seconds_count\{site="\d+",kind="signin"\} \d+/);
    expect(text).toMatch(/^gd_sessions 1$/m);
    expect(text).toMatch(/^gd_saved_accounts 0$/m);
    expect(text).toMatch(/^gd_process_resident_memory_bytes \d+/m);
    // The PostgreSQL pools of live requests and of the background, each with its waiting queries.
    if (store.kind === "postgres") {
      expect(text).toMatch(/^gd_db_pool_connections\{pool="requests",state="in_use"\} \d+$/m);
      expect(text).toMatch(/^gd_db_pool_waiting\{pool="background"\} \d+$/m);
    } else {
      expect(text).not.toContain("gd_db_pool_waiting{");
    }
    expect(text).toContain("gd_job_runs_total");
    // Nothing secret: no token, no user id, no query.
    expect(text).not.toMatch(/sk-metrics|userId|\?/);

    // The sign-in's log lines carry its id, the site call included.
    const lines = app
      .output()
      .split("\n")
      .filter((l) => l.includes('"request":"trace-abc-123"'));
    expect(lines.some((l) => l.includes('"event":"site.call"') && l.includes('"path":"/api/user/self"'))).toBe(true);
    expect(lines.some((l) => l.includes('"event":"request"') && l.includes('"path":"/api/auth/login"'))).toBe(true);
  });

  it("labels requests from a fixed set of routes: random paths and methods add no series", async () => {
    const scrape = async () => {
      const res = await fetch(`${app.url}/api/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return (await res.text()).split("\n").filter((l) => l.startsWith("gd_http_requests_total{"));
    };
    const junk = async (n: number) => {
      for (let i = 0; i < n; i += 25) {
        await Promise.all(
          Array.from({ length: 25 }, async (_, j) => {
            const r = () => Math.random().toString(36).slice(2, 10);
            const method = ["GET", "POST", "BREW", "PATCH"][(i + j) % 4] as string;
            const res = await fetch(`${app.url}/api/site/${r()}/${r()}/${r()}?${r()}=1`, { method });
            await res.arrayBuffer();
            await (await fetch(`${app.url}/${r()}/${r()}`)).arrayBuffer();
          }),
        );
      }
    };
    // Each path is new: a series per path or method would show after a few hundred of them.
    await junk(50);
    const before = await scrape();
    await junk(150);
    const after = await scrape();
    // The same series, only their counts grew.
    const series = (lines: string[]) => lines.map((l) => l.slice(0, l.lastIndexOf(" "))).sort();
    expect(series(after)).toEqual(series(before));
    const routes = new Set(after.map((l) => /route="([^"]*)"/.exec(l)?.[1]));
    expect(routes).toContain("/api/site/[...path]");
    for (const route of routes) expect(route).toMatch(/^(\/api\/[\w/[\].-]*|\/[\w/[\].-]*|other|\/_next)$/);
    expect(after.join("\n")).not.toMatch(/method="BREW"/);
  });

  it("is not served without METRICS_TOKEN", async () => {
    const copy = storeForAnotherServer(store);
    bare = await startApp({ DATABASE_URL: copy.url, DATA_DIR: copy.dir });
    expect((await fetch(`${bare.url}/api/metrics`)).status).toBe(404);
  });
});
