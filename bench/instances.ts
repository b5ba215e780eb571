/**
 * Many instances and every core (docs/design.md 18, 23): requests per second with WORKERS=2 ÷ one
 * worker; the calls one site sees in its busiest minute ÷ its budget with 1, 2 and 4 instances on
 * one PostgreSQL (and 2 with Redis) under live and background load; and how long recovery takes:
 * a backfill whose instance was killed, and service and a backfill after PostgreSQL stopped 10 s.
 */
import { newApiUser, startGateway } from "../src/demo/gateway";
import { demoHistory, type History } from "../src/demo/history";
import { closeDb, createDb, type Db } from "../src/server/db/client";
import { migratePostgres } from "../src/server/db/migrate";
import { siteRegistry } from "../src/server/sites/registry";
import { tempPostgres } from "../tests/support/db";
import { busiestMinute, startLegacyGateway } from "../tests/support/gateway";
import { request, signInOverHttp, type HttpSession } from "../tests/support/http";
import { startPrivatePostgres } from "../tests/support/private-postgres";
import { startPrivateRedis } from "../tests/support/private-redis";
import { startApp, type RunningApp } from "../tests/support/server";
import { ROUNDS, load, median, signIn } from "./common";

const PASSWORD = "bench-password-0123456789-abcdefghijklmnop";
/** How long each budget run drives load: past one whole window of the budget. */
const BUDGET_SECONDS = Number(process.env.BENCH_BUDGET_SECONDS || 70);
const BUDGET = 60;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export type InstanceFigures = {
  workers: { one: number; two: number; non2xx: number };
  budget: Array<{ label: string; peak: number; calls: number; liveOk: number; liveFailed: number; entries: number }>;
  recovery: { tookOverMs: number; finishedMs: number; outageFirstOkMs: number; outageBackfillMs: number };
};

/** Accounts with a week of history each on one new-api stand-in answering in `latencyMs`. */
async function siteWithHistory(ids: number[], callsPerDay: number, latencyMs: number) {
  const now = Math.floor(Date.now() / 1000) - 120;
  const histories = new Map<number, History>();
  const users = ids.map((id, i) => {
    const history = demoHistory({ seed: 900 + i, days: 7, callsPerDay, now });
    histories.set(id, history);
    return {
      accessToken: `bench-instances-${id}-${"q".repeat(16)}`,
      data: newApiUser(id, { username: `bench-${id}`, quota: history.totals.quota }),
      logs: history.logs,
      tokens: history.tokens,
    };
  });
  const gateway = await startGateway({ family: "new-api", users, latencyMs });
  return { gateway, histories, token: (id: number) => `bench-instances-${id}-${"q".repeat(16)}` };
}

async function entriesIn(db: Db): Promise<number> {
  const [row] = await db.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM ledger_entries");
  return row?.n ?? 0;
}

/** Requests per second of the session check, one worker against two, side by side. */
async function benchWorkers(): Promise<InstanceFigures["workers"]> {
  const store = await tempPostgres();
  const gateway = await startLegacyGateway();
  const apps: RunningApp[] = [];
  try {
    const siteId = (await siteRegistry(store.db).add({ name: "bench", url: gateway.url })).id;
    const env = {
      DATABASE_URL: store.url,
      LOGIN_RATE_LIMIT: "1000000",
      SITE_REQUESTS_PER_MINUTE: "100000",
      LEDGER_SYNC_MINUTES: "0",
      SESSION_PASSWORD: PASSWORD,
    };
    const [one, two] = await Promise.all([startApp(env), startApp({ ...env, WORKERS: "2" })]);
    apps.push(one, two);
    const { token } = await signIn(one, siteId);
    const auth = { authorization: `Bearer ${token}` };
    await load(`${one.url}/api/auth/me`, auth, 20);
    await load(`${two.url}/api/auth/me`, auth, 20);
    const rps: Record<"one" | "two", number[]> = { one: [], two: [] };
    let non2xx = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, app] of [
        ["one", one],
        ["two", two],
      ] as const) {
        const run = await load(`${app.url}/api/auth/me`, auth, 20);
        rps[name].push(run.rps);
        non2xx += run.non2xx + run.errors;
      }
    }
    return { one: median(rps.one), two: median(rps.two), non2xx };
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
    await gateway.close();
    await store.cleanup();
  }
}

/**
 * `count` instances on one PostgreSQL (Redis when given) and one site with a budget of 60 a
 * minute: 8 accounts signed in over them (each sign-in starts a week's backfill, the background
 * load) and two live readers per instance asking for fresh summaries for BUDGET_SECONDS.
 */
async function budgetRun(label: string, count: number, redisUrl?: string) {
  const store = await tempPostgres();
  const ids = Array.from({ length: 8 }, (_, i) => 700 + i);
  const site = await siteWithHistory(ids, 150, 20);
  const apps: RunningApp[] = [];
  try {
    const siteId = (await siteRegistry(store.db).add({ name: "bench", url: site.gateway.url })).id;
    const env = {
      DATABASE_URL: store.url,
      LOGIN_RATE_LIMIT: "0",
      SITE_REQUESTS_PER_MINUTE: String(BUDGET),
      LEDGER_SYNC_MINUTES: "10",
      SESSION_PASSWORD: PASSWORD,
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    };
    apps.push(...(await Promise.all(Array.from({ length: count }, () => startApp(env)))));
    const started = site.gateway.requests.length;
    const sessions: Array<{ app: RunningApp; session: HttpSession }> = [];
    for (const [i, id] of ids.entries()) {
      const app = apps[i % apps.length]!;
      sessions.push({
        app,
        session: await signInOverHttp(app.url, { userId: id, accessToken: site.token(id), siteId }),
      });
    }
    let liveOk = 0;
    let liveFailed = 0;
    const until = Date.now() + BUDGET_SECONDS * 1000;
    const reader = async (app: RunningApp, offset: number) => {
      const mine = sessions.filter((s) => s.app === app);
      for (let i = offset; Date.now() < until; i++) {
        const { session } = mine[i % mine.length]!;
        try {
          const res = await fetch(`${app.url}/api/account/summary?refresh=1`, {
            headers: { authorization: `Bearer ${session.token}` },
            signal: AbortSignal.timeout(Math.max(1_000, until - Date.now())),
          });
          const body = (await res.json()) as { success: boolean };
          if (res.status === 200 && body.success) liveOk++;
          else liveFailed++;
        } catch {
          // Cut off at the end of the run: neither.
        }
      }
    };
    await Promise.all(apps.flatMap((app) => [reader(app, 0), reader(app, 1)]));
    const times = site.gateway.requests.slice(started).map((r) => r.at);
    return {
      label,
      peak: busiestMinute(times),
      calls: times.length,
      liveOk,
      liveFailed,
      entries: await entriesIn(store.db),
    };
  } finally {
    await Promise.all(apps.map((a) => a.kill()));
    await site.gateway.close();
    await store.cleanup();
  }
}

/** Saves accounts in a new workspace on `app` (their backfills start at its runner's next look). */
async function saveAccounts(app: RunningApp, siteId: number, ids: number[], token: (id: number) => string) {
  const made = await request(app.url, "/api/workspace/register", {
    body: { name: `基准工作区 ${Math.random().toString(36).slice(2, 8)}`, password: "bench-workspace-password" },
  });
  const auth = { authorization: `Bearer ${(made.body.data as { token: string }).token}` };
  for (const id of ids) {
    await request(app.url, "/api/workspace/accounts", {
      headers: auth,
      body: { siteId, userId: id, accessToken: token(id) },
    });
  }
}

async function complete(db: Db, count: number): Promise<boolean> {
  const [row] = await db.$queryRawUnsafe<{ n: number }[]>(
    "SELECT count(*)::int AS n FROM ledger_sync WHERE synced_at IS NOT NULL AND window_from IS NULL",
  );
  return (row?.n ?? 0) >= count;
}

async function waitFor(ok: () => Promise<boolean>, ms: number): Promise<number> {
  const started = Date.now();
  while (!(await ok().catch(() => false))) {
    if (Date.now() - started > ms) return Number.NaN;
    await sleep(200);
  }
  return Date.now() - started;
}

/** Two instances with the default leases and looks; the one backfilling is killed outright. */
async function benchTakeover(): Promise<{ tookOverMs: number; finishedMs: number }> {
  const store = await tempPostgres();
  const ids = [801, 802, 803];
  const site = await siteWithHistory(ids, 200, 60);
  const apps: RunningApp[] = [];
  try {
    const siteId = (await siteRegistry(store.db).add({ name: "bench", url: site.gateway.url })).id;
    const env = { DATABASE_URL: store.url, SESSION_PASSWORD: PASSWORD, LEDGER_SYNC_MINUTES: "60" };
    const a = await startApp(env);
    apps.push(a);
    await saveAccounts(a, siteId, ids, site.token);
    await waitFor(async () => (await entriesIn(store.db)) > 0, 60_000);
    apps.push(await startApp(env));
    await a.kill();
    // Whatever is written from now on, the other instance wrote.
    const atKill = await entriesIn(store.db);
    const tookOverMs = await waitFor(async () => (await entriesIn(store.db)) > atKill, 120_000);
    const finishedMs = await waitFor(() => complete(store.db, ids.length), 180_000);
    return { tookOverMs, finishedMs: tookOverMs + finishedMs };
  } finally {
    await Promise.all(apps.map((a) => a.kill()));
    await site.gateway.close();
    await store.cleanup();
  }
}

/** One instance on a PostgreSQL of its own, stopped for 10 s in the middle of a backfill. */
async function benchOutage(): Promise<{ firstOkMs: number; backfillMs: number }> {
  const server = await startPrivatePostgres();
  const site = await siteWithHistory([811], 200, 80);
  let app: RunningApp | undefined;
  let db: Db | undefined;
  try {
    await migratePostgres(server.url);
    db = createDb(server.url);
    const siteId = (await siteRegistry(db).add({ name: "bench", url: site.gateway.url })).id;
    app = await startApp({ DATABASE_URL: server.url, SESSION_PASSWORD: PASSWORD, LEDGER_SYNC_MINUTES: "60" });
    const running = app;
    await saveAccounts(running, siteId, [811], site.token);
    const session = await signInOverHttp(running.url, { userId: 811, accessToken: site.token(811), siteId });
    const store = db;
    await waitFor(async () => (await entriesIn(store)) > 0, 60_000);
    server.stop();
    await sleep(10_000);
    server.start();
    const back = Date.now();
    const firstOkMs = await waitFor(async () => {
      const res = await fetch(`${running.url}/api/auth/me`, { headers: { authorization: `Bearer ${session.token}` } });
      return res.status === 200;
    }, 60_000);
    const total = [...site.histories.values()].reduce((s, h) => s + h.logs.length, 0);
    await waitFor(async () => (await entriesIn(store)) >= total, 120_000);
    return { firstOkMs, backfillMs: Date.now() - back };
  } finally {
    await app?.kill();
    if (db) await closeDb(db);
    await site.gateway.close();
    server.destroy();
  }
}

export async function benchInstances(): Promise<InstanceFigures> {
  console.error("[bench] instances: WORKERS=2 ÷ 1 …");
  const workers = await benchWorkers();
  const budget = [];
  for (const n of [1, 2, 4]) {
    console.error(`[bench] instances: the site budget with ${n} …`);
    budget.push(await budgetRun(`${n} 个实例（PostgreSQL）`, n));
  }
  console.error("[bench] instances: the site budget with 2 and Redis …");
  const redis = await startPrivateRedis();
  try {
    budget.push(await budgetRun("2 个实例（Redis）", 2, redis.url));
  } finally {
    await redis.stop();
  }
  console.error("[bench] instances: recovery …");
  const takeover = await benchTakeover();
  const outage = await benchOutage();
  return {
    workers,
    budget,
    recovery: { ...takeover, outageFirstOkMs: outage.firstOkMs, outageBackfillMs: outage.backfillMs },
  };
}

const f2 = (n: number) => n.toFixed(2);
const ok = (pass: boolean) => (pass ? "✅" : "❌");
const s1 = (ms: number) => (Number.isNaN(ms) ? "did not happen" : `${(ms / 1000).toFixed(1)} s`);

export function instanceLines(f: InstanceFigures): string[] {
  const w = f.workers;
  return [
    "",
    "Many instances and every core (PostgreSQL; the budget runs: 8 accounts each starting a week's backfill at sign-in, " +
      `two live readers of fresh summaries per instance, ${BUDGET_SECONDS} s, SITE_REQUESTS_PER_MINUTE=${BUDGET}, answers in 20 ms)`,
    "",
    "| figure | goal | result |",
    "|---|---|---|",
    `| \`me\` req/s with WORKERS=2 ÷ one worker (20 connections) | report | ${f2(w.two / w.one)} (${Math.round(w.two)} / ${Math.round(w.one)}; ${w.non2xx} non-2xx) |`,
    ...f.budget.map(
      (b) =>
        `| ${b.label}: busiest 60 s at the site ÷ the budget | ≤ 1.0 | ${ok(b.peak <= BUDGET)} ${f2(b.peak / BUDGET)} (${b.peak} of ${b.calls} calls; live ${b.liveOk} ok, ${b.liveFailed} refused; ${b.entries} ledger entries) |`,
    ),
    `| an instance killed mid-backfill: the other goes on with it (default lease 30 s, looks every 15 s) | < 60 s | ${ok(f.recovery.tookOverMs < 60_000)} ${s1(f.recovery.tookOverMs)} (all three finished after ${s1(f.recovery.finishedMs)}) |`,
    `| PostgreSQL stopped 10 s: first answer 200 after it is back | report | ${s1(f.recovery.outageFirstOkMs)} |`,
    `| PostgreSQL stopped 10 s mid-backfill: backfill finished after it is back | report | ${s1(f.recovery.outageBackfillMs)} |`,
  ];
}
