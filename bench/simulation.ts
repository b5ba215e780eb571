/**
 * A deployment at scale on this machine, for `npm run bench` (`BENCH_SIMULATION=1`; PostgreSQL):
 * SIM_WORKSPACES workspaces (default 100,000) holding SIM_ACCOUNTS saved accounts (1,000,000) over
 * SIM_SITES sites (10,000) of a generator in its own process (bench/sim-sites.ts), every row
 * written straight into the store (a session per account, each account due once in the interval),
 * then two production instances on the defaults (a 10-minute interval, the site budget 60 a
 * minute) for SIM_MINUTES (30): accounts synced a minute (per instance: the two together ÷ 2),
 * how long one round of every account takes at that pace, each instance's RSS over the run, the
 * p99 of `me` on one of them while they work against, in the same minutes, a third instance with
 * no ledger runner both while they work (the machine's share told apart from the instance's own
 * syncs) and while both are stopped (idle, on the machine and the store as they are then), and
 * against that instance before any runner started; how many `me` each answers a second, each
 * process's share of the CPU, and every site's busiest 60 s against its budget.
 */
import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { load, median, rssMb, withPostgres, type Run } from "./common";
import { tempPostgres, type TempDb } from "../tests/support/db";
import { signInOverHttp } from "../tests/support/http";
import { startApp, type RunningApp } from "../tests/support/server";

const SITES = Number(process.env.SIM_SITES || 10_000);
const ACCOUNTS = Number(process.env.SIM_ACCOUNTS || 1_000_000);
const WORKSPACES = Number(process.env.SIM_WORKSPACES || 100_000);
const MINUTES = Number(process.env.SIM_MINUTES || 30);
const BUDGET = 60;
const SESSION_PASSWORD = "bench-simulation-session-password-0123456789";

export type SimulationFigures = {
  sites: number;
  accounts: number;
  workspaces: number;
  minutes: number;
  fillSeconds: number;
  syncedPerMinute: number[];
  /** Sites' price lists read, each minute (none twice within the hour). */
  listsPerMinute: number[];
  /** Sites' lists due and not taken yet, at the end of each minute. */
  listsBehind: number[];
  /** Accounts' sides of prices read, each minute (none twice within the day). */
  sidesPerMinute: number[];
  /** Working accounts whose side was due and not taken yet, at the end of each minute. */
  sidesBehind: number[];
  rss: Array<{ minute: number; a: number; b: number }>;
  /** What each instance's last full garbage collection left in use, MB (its /api/ready). */
  live: Array<{ minute: number; a: number; b: number }>;
  /** `me` (p99, answered a second) on the store with no runner, three rounds before the runners start. */
  idle: Run[];
  /** `me` idle each minute: the no-runner instance with both runners stopped (SIGSTOP) meanwhile. */
  still: Run[];
  /** `me`, each minute, on an instance with no ledger runner while both runners work. */
  control: Run[];
  /** `me`, each minute, on instance A while both runners work. */
  busy: Run[];
  /** Each process's CPU over each minute, % of one core. */
  cpu: Array<{ minute: number; a: number; b: number; control: number; sites: number; postgres: number }>;
  /** The same over the seconds `me` was asked of A each minute: what the others leave it. */
  cpuWhileAsked: Array<{ minute: number; a: number; b: number; control: number; sites: number; postgres: number }>;
  busiest: number;
  sitesAsked: number;
};

type Generator = {
  url: string;
  token: string;
  report: () => Promise<{ busiest: number; sitesAsked: number }>;
  stop: () => void;
  pid: number;
};

function startGenerator(): Promise<Generator> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "sim-sites.ts")], {
    env: { ...process.env, SIM_SITES: String(SITES), SIM_USERS_PER_SITE: String(Math.ceil(ACCOUNTS / SITES)) },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const next = () => new Promise<string>((resolve) => lines.once("line", resolve));
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    void next().then((line) => {
      const info = JSON.parse(line) as { url: string; token: string };
      resolve({
        ...info,
        report: async () => {
          const answer = next();
          child.stdin.write("report\n");
          return JSON.parse(await answer) as { busiest: number; sitesAsked: number };
        },
        stop: () => child.stdin.end(),
        pid: child.pid ?? 0,
      });
    });
  });
}

/** The rows of the deployment, written in the database itself (account k: site k mod S, user k div S). */
async function fill(store: TempDb, gen: Generator): Promise<void> {
  await withPostgres(store.url, async (client) => {
    await client.query(
      `INSERT INTO sites (name, url, family, version, quota_per_unit, display_type, probed_at)
       SELECT 'sim ' || n, $1 || '/s/' || n, 'new-api', 'v0.9.0', 500000, 'USD', now() FROM generate_series(1, $2) n`,
      [gen.url, SITES],
    );
    await client.query(
      `INSERT INTO workspaces (name, name_key, password_hash, created_at, password_changed_at)
       SELECT 'sim-ws-' || n, 'sim-ws-' || n, 'scrypt$unused', now(), now() FROM generate_series(1, $1) n`,
      [WORKSPACES],
    );
    const account = `(SELECT k, ((k - 1) % $1) + 1 AS site, ((k - 1) / $1) + 1 AS uid,
        encode(sha256(('sim-session-' || k)::bytea), 'hex') AS sid FROM generate_series(1, $2) k) a`;
    await client.query(
      `INSERT INTO sessions (id, user_id, access_token, site_user_id, site_id, site_url, user_info, created_at, expires_at)
       SELECT sid, uid::text, 'sealed-below', uid, site, $3 || '/s/' || site, '{"id":' || uid || '}', now(), now() + interval '2 days'
       FROM ${account}`,
      [SITES, ACCOUNTS, gen.url],
    );
    // Each account's side of prices due once in the day, spread over it (as a deployment that has run a while).
    await client.query(
      `INSERT INTO workspace_accounts (workspace_id, site_id, site_user_id, site_url, user_id, access_token, session_id,
         username, display_name, tags, position, state, state_at, created_at, renew_at, prices_next)
       SELECT ((k - 1) % $3) + 1, site, uid, $4 || '/s/' || site, uid::text, 'sim-unopened', sid,
         'u' || site || '-' || uid, 'u' || site || '-' || uid, '[]', k, 'ok', now(), now(), now() + interval '1 day',
         now() + ((hashtext('prices-' || k) & 2147483647) % 86400) * interval '1 second'
       FROM ${account}`,
      [SITES, ACCOUNTS, WORKSPACES, gen.url],
    );
    // Each site's list read an hour before it is due again, due once in the hour, spread over it.
    await client.query(
      `INSERT INTO site_price_reads (site_id, read_at, published, group_ratios, next_at)
       SELECT site, due - interval '1 hour', true, '{"default":1}', due
       FROM (SELECT s AS site, now() + ((hashtext('lists-' || s) & 2147483647) % 3600) * interval '1 second' AS due
             FROM generate_series(1, $1) s) d`,
      [SITES],
    );
    // Each account due once in the interval, spread over its 10 minutes whatever its site.
    await client.query(
      `INSERT INTO ledger_due (site_id, site_user_id, due_at, failures)
       SELECT site, uid, now() + ((hashtext('due-' || k) & 2147483647) % 600) * interval '1 second', 0 FROM ${account}`,
      [SITES, ACCOUNTS],
    );
  });
}

/**
 * Every session of the fill takes the sealed token of a real sign-in (every user of the generator
 * takes the same token; the seal is the servers' own, by their password).
 */
async function sealSessions(store: TempDb): Promise<void> {
  await withPostgres(store.url, async (client) => {
    await client.query(
      `UPDATE sessions SET access_token = (SELECT access_token FROM sessions WHERE access_token <> 'sealed-below' LIMIT 1)
       WHERE access_token = 'sealed-below'`,
    );
    await client.query("VACUUM ANALYZE");
  });
}

/**
 * The sites' lists read since `since` and those due now and not taken; the accounts' sides ever
 * read (none is filled in) and those due now and not taken.
 */
async function priceReads(store: TempDb, since: Date) {
  return withPostgres(store.url, async (client) => {
    const n = async (sql: string, params: unknown[] = []) =>
      Number((await client.query<{ n: string }>(sql, params)).rows[0]?.n ?? 0);
    return {
      lists: await n("SELECT count(*) AS n FROM site_price_reads WHERE read_at >= $1", [since]),
      listsBehind: await n("SELECT count(*) AS n FROM site_price_reads WHERE next_at <= now()"),
      sides: await n("SELECT count(*) AS n FROM account_prices"),
      sidesBehind: await n("SELECT count(*) AS n FROM workspace_accounts WHERE state = 'ok' AND prices_next <= now()"),
    };
  });
}

async function synced(store: TempDb): Promise<number> {
  return withPostgres(store.url, async (client) => {
    const { rows } = await client.query<{ n: string }>(
      "SELECT count(*) AS n FROM ledger_sync WHERE synced_at IS NOT NULL",
    );
    return Number(rows[0]?.n ?? 0);
  });
}

/** The CPU seconds the processes used so far (user and system, from /proc). */
function cpuSeconds(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
    } catch {
      // The process ended (a PostgreSQL backend whose connection closed).
    }
  }
  return ticks / 100;
}

/** PostgreSQL's processes: its server and a backend per connection. */
function postgresPids(): number[] {
  try {
    return execFileSync("pgrep", ["-x", "postgres"], { encoding: "utf8" }).split("\n").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export async function benchSimulation(): Promise<SimulationFigures> {
  const gen = await startGenerator();
  const store = await tempPostgres();
  const apps: RunningApp[] = [];
  try {
    let t = performance.now();
    await fill(store, gen);
    const fillSeconds = (performance.now() - t) / 1000;
    const env = { DATABASE_URL: store.url, DATA_DIR: store.dir, SESSION_PASSWORD };
    // Idle: the same store, no runner.
    const idle = await startApp({ ...env, LEDGER_SYNC_MINUTES: "0" });
    apps.push(idle);
    const person = await signInOverHttp(idle.url, { siteId: 1, userId: 1, accessToken: gen.token });
    await sealSessions(store);
    const me = (app: RunningApp) => `${app.url}/api/auth/me`;
    const auth = { authorization: `Bearer ${person.token}` };
    await load(me(idle), auth);
    const idleRuns: Run[] = [];
    for (let i = 0; i < 3; i++) idleRuns.push(await load(me(idle), auth));

    // Two instances with the runner; the one of the idle rounds stays, with no ledger runner, as
    // the control: its `me` in the same minutes is what the machine (the other processes on its
    // two cores) costs a live read, apart from what an instance's own syncs cost it.
    const b = await startApp(env);
    apps.push(b);
    const a = await startApp(env);
    apps.unshift(a);
    const syncedPerMinute: number[] = [];
    const rss: SimulationFigures["rss"] = [];
    const live: SimulationFigures["live"] = [];
    const cpu: SimulationFigures["cpu"] = [];
    const busy: Run[] = [];
    const control: Run[] = [];
    const still: Run[] = [];
    const cpuWhileAsked: SimulationFigures["cpuWhileAsked"] = [];
    const seconds = () => ({
      a: cpuSeconds([a.pid]),
      b: cpuSeconds([b.pid]),
      control: cpuSeconds([idle.pid]),
      sites: cpuSeconds([gen.pid]),
      postgres: cpuSeconds(postgresPids()),
      at: Date.now(),
    });
    let before = await synced(store);
    const listsPerMinute: number[] = [];
    const listsBehind: number[] = [];
    const sidesPerMinute: number[] = [];
    const sidesBehind: number[] = [];
    const measured = new Date();
    let pricesBefore = await priceReads(store, measured);
    let was = seconds();
    t = Date.now();
    const shares = (from: ReturnType<typeof seconds>, to: ReturnType<typeof seconds>, minute: number) => {
      const share = (k: Exclude<keyof typeof to, "at">) =>
        Math.round((100 * (to[k] - from[k])) / ((to.at - from.at) / 1000));
      return {
        minute,
        a: share("a"),
        b: share("b"),
        control: share("control"),
        sites: share("sites"),
        postgres: share("postgres"),
      };
    };
    for (let minute = 1; minute <= MINUTES; minute++) {
      const asked = seconds();
      busy.push(await load(me(a), auth));
      cpuWhileAsked.push(shares(asked, seconds(), minute));
      // Idle in this minute: the no-runner instance with the two runners stopped (SIGSTOP) for it,
      // on the machine and the store as they are now (idle read once before the runners started
      // moved by half between runs: the machine's other tenants, the store's growth). It is asked
      // first, as A is, a minute after it was last asked: asked right after the control's
      // seconds it began warm where A begins cold, and a cold start costs (in the servers' own
      // timings the control's first half second read worse than idle's after it in 7 of 8 minutes).
      for (const pid of [a.pid, b.pid]) process.kill(pid, "SIGSTOP");
      try {
        await new Promise((r) => setTimeout(r, 1000));
        still.push(await load(me(idle), auth));
      } finally {
        for (const pid of [a.pid, b.pid]) process.kill(pid, "SIGCONT");
      }
      control.push(await load(me(idle), auth));
      await new Promise((r) => setTimeout(r, Math.max(0, t + minute * 60_000 - Date.now())));
      const now = await synced(store);
      syncedPerMinute.push(now - before);
      before = now;
      const prices = await priceReads(store, measured);
      listsPerMinute.push(prices.lists - pricesBefore.lists);
      listsBehind.push(prices.listsBehind);
      sidesPerMinute.push(prices.sides - pricesBefore.sides);
      sidesBehind.push(prices.sidesBehind);
      pricesBefore = prices;
      const is = seconds();
      cpu.push(shares(was, is, minute));
      was = is;
      rss.push({ minute, a: rssMb(a.pid), b: rssMb(b.pid) });
      live.push({ minute, a: await liveHeapMb(a), b: await liveHeapMb(b) });
      console.error(
        `[simulation] minute ${minute}: ${syncedPerMinute.at(-1)} synced, ${listsPerMinute.at(-1)} lists (${listsBehind.at(-1)} due) and ${sidesPerMinute.at(-1)} sides (${sidesBehind.at(-1)} due) read, RSS ${rssMb(a.pid)} / ${rssMb(b.pid)} MB, live heap ${live.at(-1)?.a} / ${live.at(-1)?.b} MB, me p99 ${busy.at(-1)?.p99} / control ${control.at(-1)?.p99} / idle ${still.at(-1)?.p99} ms (${busy.at(-1)?.rps} / ${control.at(-1)?.rps} / ${still.at(-1)?.rps} a second), CPU % ${JSON.stringify(cpu.at(-1))}, while A is asked ${JSON.stringify(cpuWhileAsked.at(-1))}`,
      );
    }
    const { busiest, sitesAsked } = await gen.report();
    return {
      sites: SITES,
      accounts: ACCOUNTS,
      workspaces: WORKSPACES,
      minutes: MINUTES,
      fillSeconds,
      syncedPerMinute,
      listsPerMinute,
      listsBehind,
      sidesPerMinute,
      sidesBehind,
      rss,
      live,
      idle: idleRuns,
      still,
      control,
      busy,
      cpu,
      cpuWhileAsked,
      busiest,
      sitesAsked,
    };
  } finally {
    for (const app of apps) await app.stop();
    gen.stop();
    await store.cleanup();
  }
}

/** What the instance's last full collection left in use, MB (its readiness share of the 256 MB cap). */
async function liveHeapMb(app: RunningApp): Promise<number> {
  const res = await fetch(`${app.url}/api/ready`);
  const body = (await res.json()) as { checks?: { heapLiveShare?: number } };
  return Math.round((body.checks?.heapLiveShare ?? 0) * 256);
}

/** The figures for docs/benchmarks.md. */
export function simulationLines(r: SimulationFigures): string[] {
  const ok = (pass: boolean) => (pass ? "✅" : "❌");
  // The first minutes fill the runner's line; the pace is that of the rest.
  const steady = r.syncedPerMinute.slice(Math.min(2, r.syncedPerMinute.length - 1));
  const perMinute = median(steady);
  const p99 = (runs: Run[]) => median(runs.map((x) => x.p99));
  const rps = (runs: Run[]) => median(runs.map((x) => x.rps));
  const busy = p99(r.busy);
  const ratio = busy / Math.max(1, p99(r.still));
  const before = busy / Math.max(1, p99(r.idle));
  const own = busy / Math.max(1, p99(r.control));
  const cpuOf = (k: "a" | "b" | "control" | "sites" | "postgres", of = r.cpu) =>
    median(of.slice(Math.min(2, of.length - 1)).map((c) => c[k]));
  const first = r.rss[Math.min(2, r.rss.length - 1)];
  const last = r.rss.at(-1);
  const firstLive = r.live[Math.min(2, r.live.length - 1)];
  const lastLive = r.live.at(-1);
  return [
    "",
    `Simulation: ${r.workspaces.toLocaleString("en-US")} workspaces, ${r.accounts.toLocaleString("en-US")} saved accounts over ${r.sites.toLocaleString("en-US")} sites, two instances on one PostgreSQL for ${r.minutes} minutes (rows written in ${r.fillSeconds.toFixed(0)} s)`,
    "",
    "| figure | goal | value |",
    "|---|---|---|",
    `| accounts synced a minute, per instance (median after the first two minutes) | report | ${Math.round(perMinute / 2)} (the two: ${steady.join(", ")}) |`,
    `| one round of every account at that pace | report | ${perMinute > 0 ? (r.accounts / perMinute / 60).toFixed(1) : "∞"} hours |`,
    `| sites' price lists read a minute (median after the first two minutes; hourly for every site needs ${Math.round(r.sites / 60).toLocaleString("en-US")}) | report | ${median(r.listsPerMinute.slice(Math.min(2, r.listsPerMinute.length - 1)))} (due and not taken at each minute's end: ${r.listsBehind.join(", ")}) |`,
    `| accounts' sides of prices read a minute (median after the first two minutes; daily for every account needs ${Math.round(r.accounts / 1440).toLocaleString("en-US")}) | report | ${median(r.sidesPerMinute.slice(Math.min(2, r.sidesPerMinute.length - 1)))} (due and not taken at each minute's end: ${r.sidesBehind.join(", ")}) |`,
    `| RSS of each instance: minute ${first?.minute} → last | flat | ${ok(!!first && !!last && last.a - first.a < 30 && last.b - first.b < 30)} ${first?.a} → ${last?.a} MB, ${first?.b} → ${last?.b} MB |`,
    `| heap left in use by a full collection, each instance: minute ${firstLive?.minute} → last | flat | ${ok(!!firstLive && !!lastLive && lastLive.a - firstLive.a < 15 && lastLive.b - firstLive.b < 15)} ${firstLive?.a} → ${lastLive?.a} MB, ${firstLive?.b} → ${lastLive?.b} MB (minute by minute: ${r.live.map((l) => `${l.a}/${l.b}`).join(" ")}) |`,
    `| \`me\` p99 while they work ÷ idle in the same minutes (the no-runner instance, both runners stopped meanwhile) | ≤ 1.2 | ${ok(ratio <= 1.2)} ${ratio.toFixed(2)} (${busy} / ${p99(r.still)} ms; idle minute by minute: ${r.still.map((x) => x.p99).join(", ")}) |`,
    `| \`me\` p99 while they work ÷ the store with no runner, read before they started | report | ${before.toFixed(2)} (${busy} / ${p99(r.idle)} ms) |`,
    `| \`me\` p99 while they work ÷ the same minutes on an instance with no ledger runner | report | ${own.toFixed(2)} (${busy} / ${p99(r.control)} ms) |`,
    `| \`me\` answered a second on A while they work ÷ idle in the same minutes (the thread's share left to it) | report | ${(rps(r.busy) / Math.max(1, rps(r.still))).toFixed(2)} (${Math.round(rps(r.busy))} / ${Math.round(rps(r.still))}; the control in the same minutes: ${Math.round(rps(r.control))}; idle before they started: ${Math.round(rps(r.idle))}) |`,
    `| CPU, % of one core (median minute after the first two): A, B, no-runner instance, sites, PostgreSQL | report | ${cpuOf("a")}, ${cpuOf("b")}, ${cpuOf("control")}, ${cpuOf("sites")}, ${cpuOf("postgres")} |`,
    `| the same over the seconds \`me\` is asked of A | report | ${(["a", "b", "control", "sites", "postgres"] as const).map((k) => cpuOf(k, r.cpuWhileAsked)).join(", ")} |`,
    `| busiest 60 s at any site (budget ${BUDGET}) | ≤ ${BUDGET} | ${ok(r.busiest <= BUDGET)} ${r.busiest} (${r.sitesAsked.toLocaleString("en-US")} sites asked) |`,
  ];
}
