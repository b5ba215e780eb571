/**
 * The runner's claim of due accounts (session/due.ts) at deployment sizes: a claim of one batch
 * (64 accounts, as a pass takes at most) from a store of 100 accounts and from one of 1,000,000
 * (100,000 with a live session and a due time spread over the interval, 900,000 parked), timed
 * side by side in one run, with the heap the claims leave behind. The own claim design is kept where this
 * ratio holds (docs/design.md 28).
 */
import Database from "better-sqlite3";
import { createDb, closeDb, sqlitePath } from "../src/server/db/client";
import { ledgerDue } from "../src/server/session/due";
import { tempPostgres, tempSqlite, type TempDb } from "../tests/support/db";
import { median, timed, withPostgres } from "./common";

const BATCH = 64;
const CLAIMS = Number(process.env.BENCH_CLAIMS || 200);
const INTERVAL_MS = 10 * 60_000;

export type ClaimFigures = {
  kind: "sqlite" | "postgres";
  few: number;
  many: number;
  heapMb: number;
};

/** `total` accounts, `live` of them due within the interval around now, the rest parked. */
async function fillDue(store: TempDb, total: number, live: number, now: number): Promise<void> {
  if (store.kind === "sqlite") {
    const conn = new Database(sqlitePath(store.url));
    const insert = conn.prepare("INSERT INTO ledger_due (site_id, site_user_id, due_at, failures) VALUES (?, ?, ?, 0)");
    conn.transaction(() => {
      for (let i = 0; i < total; i++) {
        const due = i < live ? new Date(now - INTERVAL_MS / 2 + ((i * 7919) % INTERVAL_MS)) : null;
        insert.run(1 + (i % 10_000), i, due ? due.toISOString().replace("Z", "+00:00") : null);
      }
    })();
    conn.close();
    return;
  }
  await withPostgres(store.url, async (client) => {
    await client.query(
      `INSERT INTO ledger_due (site_id, site_user_id, due_at, failures)
       SELECT 1 + (i % 10000), i,
              CASE WHEN i < $2 THEN to_timestamp($3 / 1000.0 + ((i * 7919) % $4) / 1000.0)::timestamp ELSE NULL END, 0
         FROM generate_series(0, $1 - 1) AS i`,
      [total, live, now - INTERVAL_MS / 2, INTERVAL_MS],
    );
    await client.query("ANALYZE ledger_due");
  });
}

/** The median time of one claim of a batch; what was claimed is let go of between claims, untimed. */
async function claimTimes(store: TempDb, now: number): Promise<{ ms: number; heapMb: number }> {
  const db = createDb(store.url);
  try {
    const due = ledgerDue(db);
    const times: number[] = [];
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < CLAIMS; i++) {
      let claimed: Awaited<ReturnType<typeof due.claim>> = [];
      times.push(await timed(async () => (claimed = await due.claim(BATCH, new Date(now), new Date(now + 30_000)))));
      // Due again at once (as an account whose sync ended), so every claim finds a full batch.
      for (const a of claimed) await due.next(a, new Date(now - 1000));
    }
    global.gc?.();
    return { ms: median(times), heapMb: (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20 };
  } finally {
    await closeDb(db);
  }
}

export async function benchClaims(kind: "sqlite" | "postgres"): Promise<ClaimFigures> {
  const now = Date.now();
  const make = () => (kind === "sqlite" ? Promise.resolve(tempSqlite()) : tempPostgres());
  const few = await make();
  const many = await make();
  try {
    await fillDue(few, 100, 100, now);
    await fillDue(many, 1_000_000, 100_000, now);
    // Side by side, twice each, in turns: the machine's noise falls on both.
    const fewRuns: number[] = [];
    const manyRuns: number[] = [];
    let heapMb = 0;
    for (let round = 0; round < 2; round++) {
      fewRuns.push((await claimTimes(few, now)).ms);
      const m = await claimTimes(many, now);
      manyRuns.push(m.ms);
      heapMb = Math.max(heapMb, m.heapMb);
    }
    return { kind, few: Math.min(...fewRuns), many: Math.min(...manyRuns), heapMb };
  } finally {
    await few.cleanup();
    await many.cleanup();
  }
}

export function claimLines(results: ClaimFigures[]): string[] {
  const f2 = (n: number) => n.toFixed(2);
  const ok = (pass: boolean) => (pass ? "✅" : "❌");
  return [
    "",
    `The runner's claim of a batch of ${BATCH} due accounts (median of ${CLAIMS} claims, best of 2 rounds)`,
    "",
    `| figure | goal | ${results.map((r) => r.kind).join(" | ")} |`,
    `|---|---|${results.map(() => "---|").join("")}`,
    `| claim with 1,000,000 accounts (100,000 live) ÷ with 100 | ≤ 1.5 | ${results.map((r) => `${ok(r.many / r.few <= 1.5)} ${f2(r.many / r.few)} (${f2(r.many)} ms / ${f2(r.few)} ms)`).join(" | ")} |`,
    `| heap kept after ${CLAIMS} claims at 1,000,000 (after a collection) | report | ${results.map((r) => `${f2(r.heapMb)} MB`).join(" | ")} |`,
  ];
}
