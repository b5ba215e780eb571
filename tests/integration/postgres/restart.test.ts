import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway } from "../../../src/demo/gateway";
import { demoHistory } from "../../../src/demo/history";
import { closeDb, createDb, type Db } from "../../../src/server/db/client";
import { driverOf } from "../../../src/server/db/driver";
import { migratePostgres } from "../../../src/server/db/migrate";
import { siteRegistry } from "../../../src/server/sites/registry";
import { ALICE, startLegacyGateway } from "../../support/gateway";
import { startPrivatePostgres, type PrivatePostgres } from "../../support/private-postgres";
import { startApp, type RunningApp } from "../../support/server";
import { request, signInOverHttp } from "../../support/http";

let pgServer: PrivatePostgres;
let gateway: RunningGateway;
let db: Db;
let app: RunningApp;
let siteId: number;

beforeAll(async () => {
  pgServer = await startPrivatePostgres();
  await migratePostgres(pgServer.url);
  gateway = await startLegacyGateway();
  db = createDb(pgServer.url);
  siteId = (await siteRegistry(db).add({ name: "站点", url: gateway.url })).id;
  app = await startApp({ DATABASE_URL: pgServer.url, LOGIN_RATE_LIMIT: "5", DB_TIMEOUT_MS: "2000" });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  if (db) await closeDb(db);
  await gateway?.close();
  pgServer?.destroy();
});

type Sample = { status: number; ms: number; body: unknown };

async function me(token: string): Promise<Sample> {
  const started = Date.now();
  try {
    const res = await fetch(`${app.url}/api/auth/me`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(15_000),
    });
    return { status: res.status, ms: Date.now() - started, body: await res.json() };
  } catch (error) {
    return { status: -1, ms: Date.now() - started, body: String(error) };
  }
}

async function login(): Promise<string> {
  return (await signInOverHttp(app.url, { userId: ALICE.id, accessToken: ALICE.token, siteId })).token;
}

describe("a PostgreSQL restart during traffic", () => {
  it("costs clear JSON errors while it is down, and full service after, with no session lost", async () => {
    const token = await login();
    expect((await me(token)).status).toBe(200);

    const samples: Sample[] = [];
    let running = true;
    const traffic = (async () => {
      while (running) samples.push(await me(token));
    })();

    await new Promise((r) => setTimeout(r, 300));
    pgServer.stop();
    const downFrom = samples.length;
    await new Promise((r) => setTimeout(r, 2_000));
    const downTo = samples.length;
    pgServer.start();

    let recovered: Sample | undefined;
    for (let i = 0; i < 60; i++) {
      const s = await me(token);
      if (s.status === 200) {
        recovered = s;
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    running = false;
    await traffic;

    const down = samples.slice(downFrom, downTo);
    expect(down.length).toBeGreaterThan(0);
    expect(down.some((s) => s.status === 503)).toBe(true);
    for (const s of samples) {
      expect([200, 503]).toContain(s.status);
      expect(s.ms).toBeLessThan(5_000);
      if (s.status === 503) expect(s.body).toEqual({ success: false, message: "数据库暂时不可用，请稍后再试" });
    }
    expect(recovered?.status).toBe(200);
    expect((await me(await login())).status).toBe(200);
    expect((await me(token)).status).toBe(200);
  }, 90_000);
});

describe("a PostgreSQL outage in the middle of a backfill", () => {
  it("leaves no job stalled: the backfill goes on once the database is back, and the ledger is exact", async () => {
    const now = Math.floor(Date.now() / 1000) - 120;
    const history = demoHistory({ seed: 77, days: 7, callsPerDay: 200, now });
    const user = {
      accessToken: `outage-token-${"z".repeat(20)}`,
      data: newApiUser(601, { username: "outage", quota: history.totals.quota, used_quota: history.totals.usedQuota }),
      logs: history.logs,
      tokens: history.tokens,
    };
    // Each log page takes a while: the backfill is writing when the database goes.
    const slow = await startGateway({ family: "new-api", users: [user], latencyMs: 80 });
    const slowId = (await siteRegistry(db).add({ name: "远端站点", url: slow.url })).id;
    const worker = await startApp({
      DATABASE_URL: pgServer.url,
      DB_TIMEOUT_MS: "2000",
      JOB_TICK_SECONDS: "1",
      LEDGER_SYNC_MINUTES: "60",
      // Leases far longer than the outage: the backfill must not wait for its own to run out.
      JOB_LEASE_SECONDS: "90",
    });
    try {
      const made = await request(worker.url, "/api/workspace/register", {
        body: { name: "停库工作区", password: "outage-workspace-password" },
      });
      const token = (made.body.data as { token: string }).token;
      const saved = await request(worker.url, "/api/workspace/accounts", {
        headers: { authorization: `Bearer ${token}` },
        body: { siteId: slowId, userId: 601, accessToken: user.accessToken },
      });
      expect(saved.status, JSON.stringify(saved.body)).toBe(200);
      const stored = async () => {
        const [row] = await db.$queryRawUnsafe<{ count: number; quota: bigint }[]>(
          "SELECT count(*)::int AS count, coalesce(sum(quota), 0)::bigint AS quota FROM ledger_entries WHERE site_id = $1",
          slowId,
        );
        return { count: row?.count ?? 0, quota: Number(row?.quota ?? 0) };
      };
      const truth = { count: history.logs.length, quota: history.logs.reduce((s, l) => s + l.quota, 0) };
      for (let i = 0; i < 150 && (await stored()).count === 0; i++) await new Promise((r) => setTimeout(r, 200));
      expect((await stored()).count).toBeGreaterThan(0);

      pgServer.stop();
      await new Promise((r) => setTimeout(r, 10_000));
      pgServer.start();
      const back = Date.now();
      let done = await stored().catch(() => ({ count: 0, quota: 0 }));
      while (done.count < truth.count && Date.now() - back < 100_000) {
        await new Promise((r) => setTimeout(r, 500));
        done = await stored().catch(() => done);
      }
      console.log(`backfill finished ${Date.now() - back} ms after PostgreSQL returned`);
      expect(done).toEqual(truth);
      // Its lease runs out 50 s or more after the database returns; it went on well before.
      expect(Date.now() - back).toBeLessThan(30_000);
    } finally {
      await worker.stop();
      await slow.close();
    }
  }, 180_000);
});

describe("a PostgreSQL outage in the middle of transactions", () => {
  it("gives each one's connection back to the pool: the pool serves again once the database is back", async () => {
    // A pool of two: two connections kept by transactions the outage cut would be all of them.
    const small = createDb(pgServer.url, 2);
    const driver = driverOf(small);
    if (driver.kind !== "postgres") throw new Error("a PostgreSQL store was expected");
    const inUse = () => driver.pool.totalCount - driver.pool.idleCount;
    try {
      // The server goes while a statement inside runs: the rollback fails too.
      const cut = small.$transaction(async (tx) => {
        await tx.$queryRawUnsafe("SELECT 1");
        pgServer.stop();
        await tx.$queryRawUnsafe("SELECT 2");
      });
      await expect(cut).rejects.toThrow();
      pgServer.start();
      // The server goes between the last statement and the commit: the commit fails.
      const uncommitted = small.$transaction(async (tx) => {
        await tx.$queryRawUnsafe("SELECT 1");
        pgServer.stop();
      });
      await expect(uncommitted).rejects.toThrow();
      pgServer.start();

      expect(inUse()).toBe(0);
      for (let i = 0; i < 3; i++) {
        await small.$transaction(async (tx) => tx.$queryRawUnsafe("SELECT 1"));
        await small.ledgerSync.count();
      }
    } finally {
      // Back up for the tests after, whatever failed above.
      try {
        pgServer.start();
      } catch {
        // already running
      }
    }
    expect(inUse()).toBe(0);
    await closeDb(small);
  }, 90_000);
});
