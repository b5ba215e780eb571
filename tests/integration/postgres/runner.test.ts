import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway } from "../../../src/demo/gateway";
import { demoHistory, type History } from "../../../src/demo/history";
import { siteRegistry } from "../../../src/server/sites/registry";
import { tempPostgres, type TempDb } from "../../support/db";
import { request } from "../../support/http";
import { startApp, type RunningApp } from "../../support/server";

/**
 * The job runner of two production instances on one PostgreSQL, working for a workspace's saved
 * accounts with no browser open: one instance killed in the middle of the backfills, the other
 * takes them over when their leases end; one stopped with SIGTERM lets go of its leases at once.
 * Every ledger ends exactly equal to its site's log (nothing lost, nothing twice).
 */

const USERS = [301, 302, 303, 304, 305];
let store: TempDb;
let site: RunningGateway;
let siteId: number;
const histories = new Map<number, History>();
const apps: RunningApp[] = [];

beforeAll(async () => {
  store = await tempPostgres();
  const now = Math.floor(Date.now() / 1000) - 120;
  const users = USERS.map((id, i) => {
    // The last two are backfilled while an instance is stopped: long enough that the stop comes
    // in the middle however slowly the next instance starts.
    const long = id >= 304;
    const history = demoHistory({ seed: 500 + i, days: long ? 14 : 7, callsPerDay: long ? 300 : 150, now });
    histories.set(id, history);
    const data = newApiUser(id, {
      username: `runner-${id}`,
      quota: history.totals.quota,
      used_quota: history.totals.usedQuota,
      request_count: history.totals.requestCount,
    });
    return { accessToken: `runner-token-${id}-${"y".repeat(16)}`, data, logs: history.logs, tokens: history.tokens };
  });
  // A distant site: each log page takes a while, so the backfills are under way when an instance dies.
  site = await startGateway({ family: "new-api", users, latencyMs: 60 });
  siteId = (await siteRegistry(store.db).add({ name: "远端站点", url: site.url })).id;
});
afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await site?.close();
  await store?.cleanup();
});

/**
 * An instance: `leaseSeconds` is how long its leases last unrenewed, `tickSeconds` how often its
 * runner looks; the defaults where not given (a 30 s lease, a look every 15 s).
 */
async function instance(o: { leaseSeconds?: number; tickSeconds?: number } = {}): Promise<RunningApp> {
  const app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    SESSION_PASSWORD: "runner-test-session-password-0123456789",
    // An interval far longer than the test: an interrupted backfill must not wait for its next moment.
    LEDGER_SYNC_MINUTES: "60",
    ...(o.leaseSeconds ? { JOB_LEASE_SECONDS: String(o.leaseSeconds) } : {}),
    ...(o.tickSeconds ? { JOB_TICK_SECONDS: String(o.tickSeconds) } : {}),
  });
  apps.push(app);
  return app;
}

type SyncRow = { site_user_id: string; holder: string | null; synced_at: Date | null; window_from: number | null };

async function syncRows(): Promise<SyncRow[]> {
  return store.db.$queryRawUnsafe<SyncRow[]>(
    "SELECT site_user_id::text, holder, synced_at, window_from FROM ledger_sync ORDER BY site_user_id",
  );
}

async function stored(userId: number): Promise<{ count: number; quota: number }> {
  const [row] = await store.db.$queryRawUnsafe<{ count: number; quota: bigint }[]>(
    "SELECT count(*)::int AS count, coalesce(sum(quota), 0)::bigint AS quota FROM ledger_entries WHERE site_id = $1 AND site_user_id = $2",
    siteId,
    userId,
  );
  return { count: row?.count ?? 0, quota: Number(row?.quota ?? 0) };
}

function truth(userId: number): { count: number; quota: number } {
  const logs = histories.get(userId)?.logs ?? [];
  return { count: logs.length, quota: logs.reduce((s, l) => s + l.quota, 0) };
}

async function until(what: string, ok: () => Promise<boolean>, ms: number): Promise<number> {
  const started = Date.now();
  while (!(await ok())) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return Date.now() - started;
}

const complete = async (users: number[]) => {
  const rows = await syncRows();
  return users.every((u) =>
    rows.some((r) => Number(r.site_user_id) === u && r.synced_at !== null && r.window_from === null),
  );
};

async function save(app: RunningApp, token: string, userIds: number[]): Promise<void> {
  for (const id of userIds) {
    const added = await request(app.url, "/api/workspace/accounts", {
      headers: { authorization: `Bearer ${token}` },
      body: { siteId, userId: id, accessToken: `runner-token-${id}-${"y".repeat(16)}` },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
  }
}

describe("the job runner on two instances", () => {
  it("finishes the backfills of an instance killed mid-sync, and of one stopped with SIGTERM, exactly", async () => {
    // Both on the default lease and look: a dead holder's every account goes on within a minute.
    const a = await instance();
    const made = await request(a.url, "/api/workspace/register", {
      body: { name: "后台工作区", password: "runner-workspace-password" },
    });
    expect(made.status).toBe(200);
    const token = (made.body.data as { token: string }).token;

    // The first three accounts: instance A backfills them, and is killed in the middle.
    await save(a, token, [301, 302, 303]);
    await until(
      "A's syncs under way with entries stored",
      async () => (await syncRows()).some((r) => r.holder !== null) && (await stored(301)).count > 0,
      30_000,
    );
    // B looks at the default pace; its leases (60 s) tell its own from C's below.
    const b = await instance({ leaseSeconds: 60 });
    await a.kill();
    const killed = Date.now();
    const partial = await Promise.all([301, 302, 303].map(stored));
    expect(partial.some((p, i) => p.count < truth(301 + i).count)).toBe(true);
    // B takes over each account when A's lease on it (30 s) ends, at its next look (15 s).
    const resumed = await Promise.all(
      [301, 302, 303].map(async (u, i) => {
        const before = partial[i]?.count ?? 0;
        const done = truth(u).count;
        return until(
          `B to go on with account ${u}`,
          async () => {
            const now = (await stored(u)).count;
            return now > before || now === done;
          },
          90_000,
        );
      }),
    );
    console.log(`B went on with A's accounts ${resumed.join(", ")} ms after A was killed`);
    for (const ms of resumed) expect(ms).toBeLessThanOrEqual(60_000);
    const tookOver = await until("B to finish A's backfills", () => complete([301, 302, 303]), 120_000);
    console.log(`B finished A's backfills ${Date.now() - killed} ms after A was killed (${tookOver} ms of waiting)`);
    for (const u of [301, 302, 303]) expect(await stored(u), `account ${u}`).toEqual(truth(u));

    // Two more accounts: B (leases of 60 s) backfills them and is stopped with SIGTERM in the middle.
    await save(b, token, [304, 305]);
    await until(
      "B's syncs of the new accounts under way",
      async () =>
        (await syncRows()).some((r) => Number(r.site_user_id) >= 304 && r.holder !== null) &&
        (await stored(304)).count > 0,
      30_000,
    );
    const c = await instance({ leaseSeconds: 30, tickSeconds: 1 });
    const stopping = Date.now();
    await b.stop();
    // It ended its syncs after their slice and let go of their leases: nothing waits for 60 s.
    expect(Date.now() - stopping).toBeLessThan(5_000);
    expect(await complete([304, 305])).toBe(false);
    // No lease of B's is left (C's own last 30 s at most).
    const [held] = await store.db.$queryRawUnsafe<{ n: number }[]>(
      "SELECT count(*)::int AS n FROM ledger_sync WHERE lease_until > now() + interval '35 seconds'",
    );
    expect(held?.n).toBe(0);
    // C goes on at once (well before those leases would have ended) and finishes.
    const wentOn = await until("C to finish B's backfills", () => complete([304, 305]), 100_000);
    console.log(`C finished B's backfills ${wentOn} ms after B stopped`);
    for (const u of [304, 305]) expect(await stored(u), `account ${u}`).toEqual(truth(u));
    expect(c.output()).toContain("服务已启动");
  }, 300_000);
});
