/** What the benchmark scenarios share: load runs, timing, the servers' memory, a filled store, a sign-in. */
import { readFileSync } from "node:fs";
import autocannon from "autocannon";
import Database from "better-sqlite3";
import pg from "pg";
import { sqlitePath } from "../src/server/db/client";
import { type TempDb } from "../tests/support/db";
import { ALICE } from "../tests/support/gateway";
import { type RunningApp } from "../tests/support/server";
import { signInOverHttp } from "../tests/support/http";

export const SECONDS = Number(process.env.BENCH_SECONDS || 4);
export const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
export const LOGIN_SAMPLES = Number(process.env.BENCH_LOGINS || 300);
/** Sessions stored in the large store, and how many of them are live (the rest expired an hour ago). */
export const MANY = 1_000_000;
export const MANY_LIVE = 100_000;

export type Run = { rps: number; p50: number; p99: number; non2xx: number; errors: number };

export function load(url: string, headers: Record<string, string>, connections = 10): Promise<Run> {
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

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** Runs `work` on a connection of its own to a PostgreSQL store, closed after. */
export async function withPostgres<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Adds sessions straight into the store, as many real users would leave them: the first `live`
 * end in a day, the rest ended an hour ago (they leave in the purge's batches meanwhile).
 */
export async function fill(store: TempDb, count: number, live = count): Promise<void> {
  const now = Date.now();
  const row = (i: number) => [
    `bench${String(i).padStart(59, "0")}`,
    String(1000 + (i % 5000)),
    "Fe26.2*1*bench",
    1000 + (i % 5000),
    1,
    "http://127.0.0.1",
    '{"id":1}',
    new Date(now).toISOString(),
    new Date(i < live ? now + 86_400_000 : now - 3_600_000).toISOString(),
  ];
  if (store.kind === "sqlite") {
    const conn = new Database(sqlitePath(store.url));
    const insert = conn.prepare(
      `INSERT INTO sessions (id, user_id, access_token, site_user_id, site_id, site_url, user_info, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    conn.transaction(() => {
      for (let i = 0; i < count; i++) insert.run(...row(i));
    })();
    conn.close();
    return;
  }
  await withPostgres(store.url, async (client) => {
    for (let start = 0; start < count; start += 10_000) {
      const cols: unknown[][] = [[], [], [], [], [], [], [], [], []];
      for (let i = start; i < Math.min(count, start + 10_000); i++) row(i).forEach((v, c) => cols[c]?.push(v));
      await client.query(
        `INSERT INTO sessions (id, user_id, access_token, site_user_id, site_id, site_url, user_info, created_at, expires_at)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::int[], $6::text[], $7::text[], $8::timestamp[], $9::timestamp[])`,
        cols,
      );
    }
    // Vacuumed and written out now, as a deployment long past its inserts is: neither autovacuum
    // nor the checkpoint after a million inserts works during the rounds.
    await client.query("VACUUM ANALYZE sessions");
    await client.query("CHECKPOINT");
  });
}

export const signIn = (app: RunningApp, siteId: number) =>
  signInOverHttp(app.url, { userId: ALICE.id, accessToken: ALICE.token, siteId });

export async function timed(run: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await run();
  return performance.now() - t;
}
