import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { siteRegistry } from "../../../src/server/sites/registry";
import { tempPostgres, type TempDb } from "../../support/db";
import { startFamilySite, type FamilySite } from "../../support/families";
import { signInOverHttp } from "../../support/http";
import { startPrivateRedis, type PrivateRedis } from "../../support/private-redis";
import { startApp, type RunningApp } from "../../support/server";

/**
 * Caches stay per instance, but a write on one instance forgets the answers it changed on every
 * other (docs/design.md 18): through PostgreSQL's LISTEN/NOTIFY, and through Redis when REDIS_URL is set.
 * The same line says that an instance answers live requests: every instance's background waits.
 */

let store: TempDb;
let redis: PrivateRedis;
let site: FamilySite;
let siteId: number;

beforeAll(async () => {
  [store, redis] = await Promise.all([tempPostgres(), startPrivateRedis()]);
  site = await startFamilySite("new-api", 0);
  siteId = (await siteRegistry(store.db).add({ name: "new-api", url: site.gateway.url })).id;
}, 60_000);
afterAll(async () => {
  await site?.gateway.close();
  await redis?.stop();
  await store?.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each([
  ["PostgreSQL", "postgres"],
  ["Redis", "redis"],
] as const)("two instances told through %s", (_, kind) => {
  const extra = (): Record<string, string> => (kind === "redis" ? { REDIS_URL: redis.url } : {});
  let a: RunningApp;
  let b: RunningApp;
  // A site with a long month behind its user (90,000 entries, 900 pages) that takes 50 ms to
  // answer: a backfill that lasts, its pace set by the site's answers more than by the machine's
  // load.
  let big: FamilySite;
  beforeAll(async () => {
    big = await startFamilySite("new-api", kind === "redis" ? 2 : 1, { latencyMs: 50 }, { callsPerDay: 3_000 });
    // Syncs on (a sign-in starts its account's), the site budget lifted: a backfill goes as fast
    // as our side lets it.
    const env = {
      DATABASE_URL: store.url,
      DATA_DIR: store.dir,
      LOGIN_RATE_LIMIT: "0",
      LEDGER_SYNC_MINUTES: "10",
      SITE_REQUESTS_PER_MINUTE: "100000",
      ...extra(),
    };
    [a, b] = await Promise.all([startApp(env), startApp(env)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await big?.gateway.close();
  });
  /** The log pages a site was asked for over the next `ms`. */
  const logPages = async (of: FamilySite, ms: number) => {
    const from = Date.now();
    await sleep(ms);
    return of.gateway.requests.filter((r) => r.path.includes("/log") && r.at >= from).length;
  };
  /** Requests to A one after another, 50 ms apart, while `during` runs. */
  const asking = async <T>(path: string, during: () => Promise<T>): Promise<T> => {
    let on = true;
    const asker = (async () => {
      while (on) {
        await fetch(`${a.url}${path}`).then((r) => r.arrayBuffer());
        await sleep(50);
      }
    })();
    try {
      await sleep(300);
      return await during();
    } finally {
      on = false;
      await asker;
    }
  };

  it("a key created on one is in the other's next list, which had the list before kept", async () => {
    const { token } = await signInOverHttp(a.url, { userId: site.user.id, accessToken: site.user.token, siteId });
    const call = async (app: RunningApp, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${app.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return (await res.json()) as { success: boolean; data: { items?: Array<{ name: string }>; id?: number } };
    };
    const names = async (app: RunningApp) =>
      ((await call(app, "GET", "/api/account/tokens")).data.items ?? []).map((t) => t.name);
    const name = `广播-${Math.random().toString(36).slice(2, 8)}`;
    // B keeps the list (15 s); the site is not asked again for it meanwhile.
    const before = await names(b);
    expect(before).not.toContain(name);
    // (Only the lists count: the sign-in's ledger sync may ask the site other things meanwhile.)
    const lists = () => site.gateway.requests.filter((r) => r.path.startsWith("/api/token")).length;
    const reads = lists();
    expect(await names(b)).toEqual(before);
    expect(lists()).toBe(reads);

    const made = await call(a, "POST", "/api/account/tokens", { name });
    expect(made.success).toBe(true);
    // The word reaches B within moments: its next list is read afresh.
    let after: string[] = [];
    for (let i = 0; i < 40 && !after.includes(name); i++) {
      await sleep(50);
      after = await names(b);
    }
    expect(after).toContain(name);
    expect(b.output()).toContain(`"event":"broadcast.store","store":"${kind}"`);
  });

  it("a person on one makes the other's background work wait its turn, and a probe does not", async () => {
    const bigId = (await siteRegistry(store.db).add({ name: `big-${kind}`, url: big.gateway.url })).id;
    // Signed in on B: B's sync reads the month's log page after page, nobody asking B anything.
    await signInOverHttp(b.url, { userId: big.user.id, accessToken: big.user.token, siteId: bigId });
    const pages = (ms: number) => logPages(big, ms);
    await sleep(1_000);
    const quiet = await pages(3_000);
    // Probes of A are nobody waiting: B goes on at its pace.
    const probed = await asking("/api/ready", () => pages(3_000));
    // A person on A (a page asking who is signed in): B's background takes its turn after A's.
    const person = await asking("/api/auth/me", () => pages(3_000));
    expect(quiet).toBeGreaterThan(6);
    expect(probed).toBeGreaterThan(quiet / 2);
    expect(person).toBeGreaterThan(0);
    // About a fifth of its pace (it waits four times each step); half at most, whatever the machine's load.
    expect(person).toBeLessThan(Math.max(quiet, probed) / 2);
  }, 60_000);

  it.skipIf(kind === "redis")(
    "an instance told not to (YIELD_TO_OTHER_INSTANCES=0) gives way only to its own requests",
    async () => {
      const own = await startFamilySite("new-api", 3, { latencyMs: 50 }, { callsPerDay: 3_000 });
      const c = await startApp({
        DATABASE_URL: store.url,
        DATA_DIR: store.dir,
        LOGIN_RATE_LIMIT: "0",
        LEDGER_SYNC_MINUTES: "10",
        SITE_REQUESTS_PER_MINUTE: "100000",
        YIELD_TO_OTHER_INSTANCES: "0",
      });
      try {
        const siteId = (await siteRegistry(store.db).add({ name: "own-machine", url: own.gateway.url })).id;
        await signInOverHttp(c.url, { userId: own.user.id, accessToken: own.user.token, siteId });
        await sleep(1_000);
        const quiet = await logPages(own, 3_000);
        // A person on A, as above: C's backfill keeps its pace.
        const person = await asking("/api/auth/me", () => logPages(own, 3_000));
        expect(quiet).toBeGreaterThan(6);
        expect(person).toBeGreaterThan(quiet / 2);
      } finally {
        await c.stop();
        await own.gateway.close();
      }
    },
    60_000,
  );
});
