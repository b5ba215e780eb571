import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway, type StandInLog } from "../../../src/demo/gateway";
import { demoHistory, type History } from "../../../src/demo/history";
import { siteRegistry } from "../../../src/server/sites/registry";
import { tempPostgres, type TempDb } from "../../support/db";
import { request, signInOverHttp } from "../../support/http";
import { startApp, type RunningApp } from "../../support/server";

/**
 * The runner's syncs stuck on the database (their commits wait for a lock held elsewhere) hold
 * every connection the background has: a live request is still answered, from a pool the
 * background never takes.
 */

const SAVED = [401, 402, 403];
const SIGNED_IN = 400;
/** How long a query may take: long enough for the live request in the first test to go first. */
const TIMEOUT_MS = 9_000;
/** How long a claimed account is held (JOB_LEASE_SECONDS). */
const HOLD_SECONDS = 150;
const token = (id: number) => `pool-token-${id}-${"z".repeat(16)}`;
let store: TempDb;
let site: RunningGateway;
let app: RunningApp;
let siteId: number;
const histories = new Map<number, History>();

beforeAll(async () => {
  store = await tempPostgres();
  const now = Math.floor(Date.now() / 1000) - 600;
  const users = [SIGNED_IN, ...SAVED].map((id, i) => {
    const history = demoHistory({ seed: 700 + i, days: 2, callsPerDay: 40, now });
    histories.set(id, history);
    const data = newApiUser(id, { username: `pool-${id}`, quota: history.totals.quota });
    return { accessToken: token(id), data, logs: history.logs, tokens: history.tokens };
  });
  site = await startGateway({ family: "new-api", users });
  siteId = (await siteRegistry(store.db).add({ name: "池站点", url: site.url })).id;
  app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    SESSION_PASSWORD: "pool-test-session-password-0123456789",
    LEDGER_SYNC_MINUTES: "60",
    JOB_TICK_SECONDS: "1",
    // Small pools, so a handful of stuck syncs fill the background's.
    DB_POOL_SIZE: "2",
    DB_BACKGROUND_POOL_SIZE: "2",
    DB_TIMEOUT_MS: String(TIMEOUT_MS),
    // Holds far longer than a test waits: an account must never wait for its hold to run out.
    JOB_LEASE_SECONDS: String(HOLD_SECONDS),
  });
});
afterAll(async () => {
  await app?.stop();
  await site?.close();
  await store?.cleanup();
});

async function until(what: string, ok: () => Promise<boolean>, ms: number): Promise<void> {
  const started = Date.now();
  while (!(await ok())) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every one of the accounts synced to the end since `since`. */
const allSynced = async (ids: number[], since = new Date(0)) => {
  const [row] = await store.db.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM ledger_sync
     WHERE site_id = $1 AND site_user_id = ANY($2::bigint[]) AND synced_at > $3 AND window_from IS NULL AND holder IS NULL`,
    siteId,
    ids,
    since,
  );
  return row?.n === ids.length;
};

/** Seen from outside the locker's transaction (which keeps one snapshot of the statistics). */
async function waitingOn(table: string): Promise<number> {
  const [row] = await store.db.$queryRawUnsafe<{ n: number }[]>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ~ $1`,
    // The table's name as a whole word (sessions, not workspace_sessions).
    `(^|[^a-z_])${table}([^a-z_]|$)`,
  );
  return row?.n ?? 0;
}

/**
 * New calls at the site for every saved account, `table` locked (the entries' by default), each
 * account due now (its last sync two hours ago, the interval one): each sync reads its new entries
 * and waits, holding its connection, to store them (the runner's look waits, with the sessions'
 * table). `whileLocked` runs once `waiting` of them wait; returns when the lock was let go of.
 */
async function syncsStuck(
  whileLocked: () => Promise<void>,
  { table = "ledger_entries", waiting = 2 } = {},
): Promise<{ due: Date; released: Date }> {
  // The new calls are later than all the syncs before read (a sync reads on from the newest entry
  // it covered): five seconds back, or just after that newest entry, once that second has passed.
  const [row] = await store.db.$queryRawUnsafe<{ newest: number | null }[]>(
    "SELECT max(newest)::int AS newest FROM ledger_sync WHERE site_id = $1 AND site_user_id = ANY($2::bigint[])",
    siteId,
    SAVED,
  );
  const at = Math.max(Math.floor(Date.now() / 1000) - 5, (row?.newest ?? 0) + 1);
  while (Date.now() / 1000 < at + 2) await new Promise((r) => setTimeout(r, 200));
  for (const id of SAVED) {
    const logs = histories.get(id)?.logs ?? [];
    const last = logs.at(-1);
    if (last) logs.push(call(last, at, 1234), call(last, at + 1, 4321));
  }
  const locker = new pg.Client({ connectionString: store.url });
  await locker.connect();
  // Made due from here: a sync that ends after this has stored what it read (the table was locked
  // until it could); its `synced_at` is taken before its last write, so it may precede the release.
  const due = new Date(Date.now() - 1000);
  try {
    await locker.query("BEGIN");
    await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    for (const table of ["ledger_sync SET synced_at = now() - interval '2 hours'", "ledger_due SET due_at = now()"])
      await store.db.$executeRawUnsafe(
        `UPDATE ${table} WHERE site_id = $1 AND site_user_id = ANY($2::bigint[])`,
        siteId,
        SAVED,
      );
    await until("the syncs to wait on the lock", async () => (await waitingOn(table)) >= waiting, 30_000);
    await whileLocked();
  } finally {
    await locker.query("ROLLBACK").catch(() => undefined);
    await locker.end();
  }
  return { due, released: new Date() };
}

/** A paid call at the site, like `like`, at `at`. */
const call = (like: StandInLog, at: number, quota: number): StandInLog => ({ ...like, type: 2, createdAt: at, quota });

/** How many entries each saved account's ledger holds. */
async function stored(): Promise<number[]> {
  const rows = await store.db.$queryRawUnsafe<{ site_user_id: bigint; n: number }[]>(
    `SELECT site_user_id, count(*)::int AS n FROM ledger_entries
     WHERE site_id = $1 AND site_user_id = ANY($2::bigint[]) GROUP BY site_user_id ORDER BY site_user_id`,
    siteId,
    SAVED,
  );
  return rows.map((r) => r.n);
}

describe("the background's own database pool", () => {
  let person: { token: string };

  it("answers a live request while the runner's syncs hold every background connection", async () => {
    person = await signInOverHttp(app.url, { siteId, userId: SIGNED_IN, accessToken: token(SIGNED_IN) });
    const made = await request(app.url, "/api/workspace/register", {
      body: { name: "池工作区", password: "pool-workspace-password" },
    });
    expect(made.status).toBe(200);
    const workspace = (made.body.data as { token: string }).token;
    for (const id of SAVED) {
      const added = await request(app.url, "/api/workspace/accounts", {
        headers: { authorization: `Bearer ${workspace}` },
        body: { siteId, userId: id, accessToken: token(id) },
      });
      expect(added.status, JSON.stringify(added.body)).toBe(200);
    }
    await until("every first sync", () => allSynced([SIGNED_IN, ...SAVED]), 60_000);

    const before = await stored();
    const { due } = await syncsStuck(async () => {
      // Every background connection waits; the live request does not: it is answered well before
      // the store's time would free one of them (with one pool it waits for exactly that).
      const me = await fetch(`${app.url}/api/auth/me`, {
        headers: { authorization: `Bearer ${person.token}` },
        signal: AbortSignal.timeout(TIMEOUT_MS / 3),
      });
      expect(me.status).toBe(200);
      expect(((await me.json()) as { data: { userInfo: { id: number } } }).data.userInfo.id).toBe(SIGNED_IN);
      expect(await waitingOn("ledger_entries")).toBeGreaterThanOrEqual(2);
    });
    // Let go, the syncs store what they read.
    await until("the syncs after the lock", () => allSynced(SAVED, due), 30_000);
    // The two new calls of each, nothing lost, nothing twice.
    expect(await stored()).toEqual(before.map((n) => n + 2));
  }, 180_000);

  it("takes a commit that outlasted the store's time for the store's failure: the sync goes on at the next look", async () => {
    const before = await stored();
    const { due } = await syncsStuck(async () => {
      // Past DB_TIMEOUT_MS the waiting syncs give up.
      await new Promise((r) => setTimeout(r, TIMEOUT_MS + 2_000));
    });
    // Not the site's fault: no wait of hours, no failure counted; the next look finishes them.
    await until("the syncs after the lock", () => allSynced(SAVED, due), 30_000);
    const rows = await store.db.$queryRawUnsafe<{ failures: number }[]>(
      "SELECT failures FROM ledger_due WHERE site_id = $1 AND site_user_id = ANY($2::bigint[])",
      siteId,
      SAVED,
    );
    expect(rows.map((r) => r.failures)).toEqual([0, 0, 0]);
    // The two new calls of each, nothing lost, nothing twice.
    expect(await stored()).toEqual(before.map((n) => n + 2));
  }, 120_000);

  it("lets the accounts a look claimed fall due again once the store is back, when it failed after the claim", async () => {
    const before = await stored();
    const { due, released } = await syncsStuck(
      // The look claimed the accounts (held for HOLD_SECONDS) and waits to read their sessions,
      // until the store's time ends it.
      () => new Promise((r) => setTimeout(r, TIMEOUT_MS + 2_000)),
      { table: "sessions", waiting: 1 },
    );
    // They are synced at the next looks, well before their hold would have run out.
    await until("the syncs after the lock", () => allSynced(SAVED, due), 30_000);
    expect(Date.now() - released.getTime()).toBeLessThan((HOLD_SECONDS * 1000) / 3);
    expect(await stored()).toEqual(before.map((n) => n + 2));
  }, 120_000);
});
