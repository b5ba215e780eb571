import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../../src/demo/gateway";
import { demoHistory } from "../../../src/demo/history";
import type { SharedBudget } from "../../../src/server/core/shared-budget";
import { closeDb, createDb } from "../../../src/server/db/client";
import { postgresBudget, redisBudget } from "../../../src/server/db/site-budget";
import { siteRegistry } from "../../../src/server/sites/registry";
import { tempPostgres, type TempDb } from "../../support/db";
import { busiestMinute } from "../../support/gateway";
import { request, signInOverHttp } from "../../support/http";
import { startPrivateRedis, type PrivateRedis } from "../../support/private-redis";
import { startApp, type RunningApp } from "../../support/server";

/**
 * One budget for the whole deployment (docs/design.md 18): the store's take is atomic however many
 * instances ask at once, by PostgreSQL and by Redis; two production instances on one PostgreSQL
 * (and with Redis) send one stand-in site no more than its budget in any minute under live and
 * background load; with Redis gone each instance keeps to its share, and back on the shared budget
 * when Redis returns.
 */

let store: TempDb;
let redis: PrivateRedis;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  store = await tempPostgres();
  redis = await startPrivateRedis();
});
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await redis?.stop();
  await store?.cleanup();
});

const OPTS = { limit: 20, background: false, windowMs: 61_000, maxInFlight: 1000, busyMs: 120_000 };

describe.each(["postgres", "redis"] as const)("the shared budget in %s", (kind) => {
  /** Two instances' views of the store (two connection pools, two Redis clients). */
  async function backends(): Promise<[SharedBudget, SharedBudget]> {
    if (kind === "redis") {
      const pair: [SharedBudget, SharedBudget] = [await redisBudget(redis.url), await redisBudget(redis.url)];
      closers.push(
        () => pair[0].close(),
        () => pair[1].close(),
      );
      return pair;
    }
    const other = createDb(store.url);
    closers.push(() => closeDb(other));
    return [postgresBudget(store.db), postgresBudget(other)];
  }

  it("gives exactly the budget's slots to two instances asking at once; places in flight; the pause", async () => {
    const [a, b] = await backends();
    // Site ids no registered site has (the instances below share this database and Redis).
    const site = kind === "redis" ? 9101 : 9001;
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).take(site, `call-${i}`, OPTS)),
    );
    expect(answers.filter((x) => x.kind === "taken")).toHaveLength(20);
    // The others wait for the oldest of the 20 to leave the window: about a minute.
    const waits = answers.flatMap((x) => (x.kind === "wait" ? [x.ms] : []));
    expect(waits).toHaveLength(40);
    expect(Math.min(...waits)).toBeGreaterThan(50_000);

    // At most two in flight: the third waits until one ends.
    const two = { ...OPTS, maxInFlight: 2 };
    expect((await a.take(site + 1, "x", two)).kind).toBe("taken");
    expect((await b.take(site + 1, "y", two)).kind).toBe("taken");
    expect((await a.take(site + 1, "z", two)).kind).toBe("wait");
    await b.done(site + 1, "x");
    expect((await b.take(site + 1, "z", two)).kind).toBe("taken");

    // Each slot taken says how full the window is; an instance gives back the calls it sent while
    // the store was away (or that a restarted store forgot), each once, those of the window only.
    const used = [];
    for (const token of ["u1", "u2", "u3"]) {
      const answer = await a.take(site + 3, token, OPTS);
      used.push(answer.kind === "taken" ? answer.used : -1);
    }
    expect(used).toEqual([1, 2, 3]);
    await b.restore(
      site + 3,
      [
        { token: "u2", ageMs: 100, background: false },
        { token: "r1", ageMs: 5_000, background: true },
        { token: "r2", ageMs: 30_000, background: false },
        { token: "old", ageMs: 70_000, background: false },
      ],
      OPTS.windowMs,
    );
    const after = await a.take(site + 3, "u4", OPTS);
    expect(after).toEqual({ kind: "taken", used: 6 });
    // A call restored 30 s ago leaves the window 30 s before now + the window: the 20th slot
    // waits for the oldest one.
    for (let i = 0; i < 14; i++) await a.take(site + 3, `fill-${i}`, OPTS);
    const full = await b.take(site + 3, "over", OPTS);
    expect(full.kind === "wait" && full.ms > 25_000 && full.ms < 32_000).toBe(true);

    // A pause one instance heard (429) holds the other.
    await a.pause(site + 2, 2_000);
    const paused = await b.take(site + 2, "p", OPTS);
    expect(paused.kind).toBe("paused");
    expect(paused.kind === "paused" && paused.ms > 1_000 && paused.ms <= 2_000).toBe(true);
  });
});

/** The busiest 60 s the site saw: the most requests in any minute (by when they arrived). */
const busiestAt = (site: RunningGateway, from = 0) =>
  busiestMinute(site.requests.map((r) => r.at).filter((t) => t >= from));

const BUDGET = 20;

async function siteWithAccounts(): Promise<{ site: RunningGateway; siteId: number; users: GatewayUser[] }> {
  const now = Math.floor(Date.now() / 1000) - 60;
  const users = [401, 402, 403].map((id, i) => {
    const history = demoHistory({ seed: 900 + i, days: 5, callsPerDay: 200, now });
    return {
      accessToken: `budget-token-${id}-${"z".repeat(16)}`,
      data: newApiUser(id, { username: `budget-${id}`, quota: history.totals.quota }),
      logs: history.logs,
    };
  });
  const site = await startGateway({ family: "new-api", users, latencyMs: 20 });
  closers.push(() => site.close());
  const siteId = (await siteRegistry(store.db).add({ name: `预算站点 ${Date.now()}`, url: site.url })).id;
  return { site, siteId, users };
}

async function instance(extra: Record<string, string> = {}): Promise<RunningApp> {
  const app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    SESSION_PASSWORD: "budget-test-session-password-0123456789",
    SITE_REQUESTS_PER_MINUTE: String(BUDGET),
    LEDGER_SYNC_MINUTES: "1",
    JOB_TICK_SECONDS: "1",
    ...extra,
  });
  closers.push(() => app.stop());
  return app;
}

/**
 * Live load on both instances: each signed in to one of the site's accounts (the sign-ins start
 * the background backfills), then reading log pages nobody has read, six at a time, for `ms`.
 */
async function load(apps: RunningApp[], siteId: number, users: GatewayUser[], ms: number): Promise<number> {
  const sessions: Array<{ token: string }> = [];
  for (const [n, app] of apps.entries()) {
    const user = users[n % users.length] as GatewayUser;
    sessions.push(
      await signInOverHttp(app.url, { siteId, userId: Number(user.data.id), accessToken: user.accessToken }),
    );
  }
  const stop = AbortSignal.timeout(ms);
  let answered = 0;
  let page = 1;
  await Promise.all(
    apps.flatMap((app, n) =>
      Array.from({ length: 6 }, async () => {
        while (!stop.aborted) {
          const res = await fetch(`${app.url}/api/account/logs?page=${page++}&pageSize=5&type=consume`, {
            headers: { authorization: `Bearer ${sessions[n]?.token ?? ""}` },
            signal: stop,
          }).catch(() => null);
          if (res?.ok) answered++;
        }
      }),
    ),
  );
  return answered;
}

describe("two instances against one site", () => {
  it("send it no more than its budget in any minute, on PostgreSQL alone, with Redis, and with WORKERS=2", async () => {
    const variants: Array<Record<string, string>> = [{}, { REDIS_URL: redis.url }, { WORKERS: "2" }];
    for (const extra of variants) {
      const { site, siteId, users } = await siteWithAccounts();
      // With WORKERS=2 the second instance is two processes: three take the budget.
      const apps = [await instance("WORKERS" in extra ? {} : extra), await instance(extra)];
      const ready = await request(apps[0]!.url, "/api/ready");
      expect((ready.body as { checks: { budget: string } }).checks.budget).toBe(
        "REDIS_URL" in extra ? "redis" : "postgres",
      );
      const answered = await load(apps, siteId, users, 25_000);
      const busiest = busiestAt(site);
      console.log(
        `${JSON.stringify(extra)}: ${site.requests.length} calls at the site, busiest minute ${busiest} (budget ${BUDGET}), ${answered} pages answered`,
      );
      expect(busiest).toBeLessThanOrEqual(BUDGET);
      // The budget was used, not left idle: both instances' live reads and the backfills got it.
      expect(busiest).toBeGreaterThanOrEqual(BUDGET - 2);
      for (const app of apps) await app.stop();
    }
  }, 180_000);

  it("holds the budget through Redis killed under load and back empty 5 s later: each on its share, the window given back", async () => {
    const { site, siteId, users } = await siteWithAccounts();
    // A Redis database of their own: the instances of the test before are still "seen" in the other.
    const url = redis.url.replace(/\/0$/, "/3");
    const apps = [await instance({ REDIS_URL: url }), await instance({ REDIS_URL: url })];
    // Both instances noted themselves in Redis (each looks every 10 s).
    await new Promise((r) => setTimeout(r, 11_000));
    const started = Date.now();
    // Past the first window's end: the calls then fall on the shares, one instance back on the
    // store while the other may still be on its own.
    const loaded = load(apps, siteId, users, 75_000);
    // Under load, Redis dies (SIGKILL: what it held is gone with it).
    await new Promise((r) => setTimeout(r, 12_000));
    await redis.stop();
    // It comes back empty 5 s later, while the load goes on; meanwhile readiness says what an
    // instance that met the loss does (the takes fall back on their shares: the events below).
    const killed = Date.now();
    const said = new Set<string>();
    while (Date.now() - killed < 5_000) {
      const ready = await request(apps[0]!.url, "/api/ready");
      expect(ready.status).toBe(200);
      said.add((ready.body as { checks: { budget: string } }).checks.budget);
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const budget of said)
      expect(["redis", "fallback：Redis 不可用，本实例按预算的 1/2 调用站点"]).toContain(budget);
    await redis.start();
    for (const app of apps) {
      let budget = "";
      for (let i = 0; i < 120 && budget !== "redis"; i++) {
        await new Promise((r) => setTimeout(r, 500));
        budget = ((await request(app.url, "/api/ready")).body as { checks: { budget: string } }).checks.budget;
      }
      expect(budget).toBe("redis");
    }
    const answered = await loaded;
    const busiest = busiestAt(site, started);
    console.log(`Redis killed and back: busiest minute ${busiest} (budget ${BUDGET}), ${answered} pages answered`);
    // Before the loss, through it and after the return: never more than the budget in a minute.
    expect(busiest).toBeLessThanOrEqual(BUDGET);
    expect(apps[0]!.output()).toContain('"event":"budget.fallback"');
    expect(apps[0]!.output()).toContain('"event":"budget.shared"');
    const check = new Redis(url);
    expect(await check.ping()).toBe("PONG");
    check.disconnect();
  }, 180_000);
});
