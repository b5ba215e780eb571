/**
 * `npm run bench`: the session check and sign-in cost, every figure taken in this one run so the
 * ratios hold on a noisy machine. Starts the production build on SQLite (and on PostgreSQL when
 * it is reachable), a gateway stand-in, and drives load with autocannon from this process.
 *
 *   npm run bench                 # both stores (PostgreSQL when reachable)
 *   BENCH_STORES=sqlite npm run bench
 *   BENCH_SECONDS=5 BENCH_ROUNDS=3 npm run bench
 */
import { readFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import autocannon from "autocannon";
import Database from "better-sqlite3";
import pg from "pg";
import { sqlitePath } from "../src/server/db/client";
import { siteRegistry } from "../src/server/sites/registry";
import { tempPostgres, tempSqlite, type TempDb } from "../tests/support/db";
import { ALICE, startLegacyGateway } from "../tests/support/gateway";
import { startApp, type RunningApp } from "../tests/support/server";
import { buildIfNeeded } from "../scripts/serve";
import { signInOverHttp } from "../tests/support/http";

const SECONDS = Number(process.env.BENCH_SECONDS || 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const LOGIN_SAMPLES = Number(process.env.BENCH_LOGINS || 300);
const MANY = 200_000;

type Run = { rps: number; p50: number; p99: number; non2xx: number; errors: number };

function load(url: string, headers: Record<string, string>, connections = 10): Promise<Run> {
  return new Promise((resolve, reject) => {
    autocannon({ url, headers, connections, duration: SECONDS, pipelining: 1 }, (error, r) => {
      if (error) return reject(error instanceof Error ? error : new Error(String(error)));
      resolve({
        rps: r.requests.average,
        p50: r.latency.p50,
        p99: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts,
      });
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** Adds expired-in-a-day sessions straight into the store, as 200 000 real users would leave. */
async function fill(store: TempDb, count: number): Promise<void> {
  const now = Date.now();
  const row = (i: number) => [
    `bench${String(i).padStart(59, "0")}`,
    String(1000 + (i % 5000)),
    "Fe26.2*1*bench",
    1,
    "http://127.0.0.1",
    '{"id":1}',
    new Date(now).toISOString(),
    new Date(now + 86_400_000).toISOString(),
  ];
  if (store.kind === "sqlite") {
    const conn = new Database(sqlitePath(store.url));
    const insert = conn.prepare(
      `INSERT INTO sessions (id, user_id, access_token, site_id, site_url, user_info, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    conn.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(...row(i));
    })();
    conn.close();
    return;
  }
  const client = new pg.Client({ connectionString: store.url });
  await client.connect();
  for (let start = 0; start < count; start += 10_000) {
    const cols: unknown[][] = [[], [], [], [], [], [], [], []];
    for (let i = start; i < Math.min(count, start + 10_000); i++) row(i).forEach((v, c) => cols[c]?.push(v));
    await client.query(
      `INSERT INTO sessions (id, user_id, access_token, site_id, site_url, user_info, created_at, expires_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::timestamp[], $8::timestamp[])`,
      cols,
    );
  }
  await client.query("ANALYZE sessions");
  await client.end();
}

const signIn = (app: RunningApp, siteId: number) =>
  signInOverHttp(app.url, { userId: ALICE.id, accessToken: ALICE.token, siteId });

async function timed(run: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await run();
  return performance.now() - t;
}

async function bench(kind: "sqlite" | "postgres") {
  const gateway = await startLegacyGateway();
  const stores = [
    kind === "sqlite" ? tempSqlite() : await tempPostgres(),
    kind === "sqlite" ? tempSqlite() : await tempPostgres(),
  ];
  const [small, large] = stores as [TempDb, TempDb];
  const apps: RunningApp[] = [];
  try {
    const siteIds: number[] = [];
    for (const s of stores) siteIds.push((await siteRegistry(s.db).add({ name: "bench", url: gateway.url })).id);
    await fill(large, MANY);
    const env = { LOGIN_RATE_LIMIT: "1000000", SESSION_PASSWORD: "bench-password-0123456789-abcdefghijklmnop" };
    const [a, b] = await Promise.all([
      startApp({ ...env, DATABASE_URL: small.url, DATA_DIR: small.dir }),
      startApp({ ...env, DATABASE_URL: large.url, DATA_DIR: large.dir }),
    ]);
    apps.push(a, b);
    const sa = await signIn(a, siteIds[0] ?? 1);
    for (let i = 0; i < 9; i++) await signIn(a, siteIds[0] ?? 1); // 10 sessions in the small store
    const sb = await signIn(b, siteIds[1] ?? 1);
    const me = (app: RunningApp) => `${app.url}/api/auth/me`;

    // Warm both servers (JIT, connection pools) before measuring.
    await load(me(a), { authorization: `Bearer ${sa.token}` });
    await load(me(b), { authorization: `Bearer ${sb.token}` });

    const rounds: Record<"none" | "bearer" | "cookie" | "many", Run[]> = { none: [], bearer: [], cookie: [], many: [] };
    for (let r = 0; r < ROUNDS; r++) {
      rounds.none.push(await load(me(a), {}));
      rounds.bearer.push(await load(me(a), { authorization: `Bearer ${sa.token}` }));
      rounds.cookie.push(await load(me(a), { cookie: sa.cookie }));
      rounds.many.push(await load(me(b), { authorization: `Bearer ${sb.token}` }));
    }
    const wide = await load(me(a), { authorization: `Bearer ${sa.token}` }, 50);

    // Login against calling the gateway directly, interleaved pair by pair.
    const direct: number[] = [];
    const logins: number[] = [];
    const floor: number[] = []; // an empty login body: the framework's own cost, no site, no store
    const empty = () =>
      fetch(`${a.url}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      }).then((r) => r.json());
    const site = `${gateway.url}/api/user/self`;
    for (let i = 0; i < LOGIN_SAMPLES; i++) {
      direct.push(
        await timed(() =>
          fetch(site, { headers: { authorization: ALICE.token, "new-api-user": String(ALICE.id) } }).then((r) =>
            r.json(),
          ),
        ),
      );
      logins.push(await timed(() => signIn(a, siteIds[0] ?? 1)));
      floor.push(await timed(empty));
    }

    const rps = (k: keyof typeof rounds) => median(rounds[k].map((x) => x.rps));
    const non2xx = [...rounds.bearer, ...rounds.cookie, ...rounds.many, wide].reduce(
      (n, x) => n + x.non2xx + x.errors,
      0,
    );
    const none401 = rounds.none.every((x) => x.non2xx > 0);
    const figures = {
      bearerVsNone: rps("bearer") / rps("none"),
      cookieVsBearer: rps("cookie") / rps("bearer"),
      manyVsFew: rps("many") / rps("bearer"),
      loginOverhead: median(logins) - median(direct),
      floorOverhead: median(floor) - median(direct),
      p99: wide.p99,
      non2xx,
      rss: Math.max(rssMb(a.pid), rssMb(b.pid)),
    };
    return {
      kind,
      figures,
      rps: { none: rps("none"), bearer: rps("bearer"), cookie: rps("cookie"), many: rps("many"), wide: wide.rps },
      login: { login: median(logins), direct: median(direct), floor: median(floor) },
      none401,
    };
  } finally {
    await Promise.all(apps.map((x) => x.stop()));
    await gateway.close();
    for (const s of stores) await s.cleanup();
  }
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({
    connectionString: process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres",
  });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

const f2 = (n: number) => n.toFixed(2);
const ok = (pass: boolean) => (pass ? "✅" : "❌");

buildIfNeeded();
const wanted = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",");
const results = [];
for (const kind of ["sqlite", "postgres"] as const) {
  if (!wanted.includes(kind)) continue;
  if (kind === "postgres" && !(await postgresReachable())) {
    console.log("PostgreSQL 不可达，跳过。");
    continue;
  }
  console.error(`[bench] ${kind} …`);
  results.push(await bench(kind));
}

const lines = [
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
    `${ROUNDS} rounds × ${SECONDS} s per figure, 10 connections unless noted; ${new Date().toISOString()}`,
  "",
  `| figure | goal | ${results.map((r) => r.kind).join(" | ")} |`,
  `|---|---|${results.map(() => "---|").join("")}`,
  `| \`me\` Bearer req/s ÷ \`me\` without token (401) req/s | ≥ 0.85 | ${results.map((r) => `${ok(r.figures.bearerVsNone >= 0.85)} ${f2(r.figures.bearerVsNone)} (${Math.round(r.rps.bearer)} / ${Math.round(r.rps.none)})`).join(" | ")} |`,
  `| \`me\` cookie ÷ \`me\` Bearer | ≥ 0.9 | ${results.map((r) => `${ok(r.figures.cookieVsBearer >= 0.9)} ${f2(r.figures.cookieVsBearer)} (${Math.round(r.rps.cookie)} / ${Math.round(r.rps.bearer)})`).join(" | ")} |`,
  `| \`me\` with 200 000 stored sessions ÷ with 10 | ≥ 0.95 | ${results.map((r) => `${ok(r.figures.manyVsFew >= 0.95)} ${f2(r.figures.manyVsFew)} (${Math.round(r.rps.many)} / ${Math.round(r.rps.bearer)})`).join(" | ")} |`,
  `| login median − gateway direct median | ≤ 3 ms | ${results.map((r) => `${ok(r.figures.loginOverhead <= 3)} ${f2(r.figures.loginOverhead)} ms (${f2(r.login.login)} − ${f2(r.login.direct)})`).join(" | ")} |`,
  `| framework floor: login with an empty body − gateway direct | report | ${results.map((r) => `${f2(r.figures.floorOverhead)} ms (${f2(r.login.floor)} − ${f2(r.login.direct)})`).join(" | ")} |`,
  `| p99 latency of \`me\` at 50 connections | report | ${results.map((r) => `${r.figures.p99} ms (${Math.round(r.rps.wide)} req/s)`).join(" | ")} |`,
  `| non-2xx answers under load | 0 | ${results.map((r) => `${ok(r.figures.non2xx === 0)} ${r.figures.non2xx}`).join(" | ")} |`,
  `| server RSS after the runs | report (< 300 MB) | ${results.map((r) => `${ok(r.figures.rss < 300)} ${r.figures.rss} MB`).join(" | ")} |`,
];
console.log(lines.join("\n"));
