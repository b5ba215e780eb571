/**
 * A workspace of 200 accounts over 10 stand-in sites (20 each, 100 ms answers, 60 requests a
 * minute): how soon 全部账户 shows its rows, whether the job runner keeps every account synced
 * within its interval inside each site's budget, what its work costs live requests, and whether
 * the server's memory stays flat while it works.
 *
 * Two production servers share one SQLite store: "busy" runs the job runner (LEDGER_SYNC_MINUTES=2,
 * a look every 10 s: 30 minutes of the default 10-minute interval's work, five times compressed,
 * in BENCH_WORKSPACE_MINUTES=6), "idle" runs none (LEDGER_SYNC_MINUTES=0). Live requests are timed
 * on both, round by round, so the ratio holds on a noisy machine.
 */
import { createTRPCClient, httpBatchStreamLink } from "@trpc/client";
import { newApiUser, startGateway, type RunningGateway } from "../src/demo/gateway";
import { demoHistory } from "../src/demo/history";
import type { AppRouter } from "../src/server/api/root";
import { siteRegistry } from "../src/server/sites/registry";
import { tempSqlite } from "../tests/support/db";
import { busiestMinute } from "../tests/support/gateway";
import { startApp, type RunningApp } from "../tests/support/server";
import { load, median, rssMb, timed } from "./common";

const SITES = 10;
const PER_SITE = 20;
const LATENCY_MS = 100;
const PER_MINUTE = 60;
const INTERVAL_MINUTES = 2;
const TICK_SECONDS = 10;
const RUN_MINUTES = Number(process.env.BENCH_WORKSPACE_MINUTES || 6);

export type WorkspaceFigures = {
  accounts: number;
  firstSyncSeconds: number;
  singleSummaryMs: number;
  firstRowMs: number;
  allRowsMs: number;
  healthyRows: number;
  /** Longest time any account went without a completed sync once all had moved to their moment. */
  longestWaitSeconds: number;
  intervalSeconds: number;
  peakWindowPerSite: number;
  syncFailures: number;
  p99Busy: number;
  p99Idle: number;
  rssStart: number;
  rssEnd: number;
  runMinutes: number;
};

/** The most calls any site saw in one 60 s window. */
function peakWindow(gateways: RunningGateway[]): number {
  return Math.max(0, ...gateways.map((g) => busiestMinute(g.requests.map((r) => r.at))));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function benchWorkspace(): Promise<WorkspaceFigures> {
  const gateways = await Promise.all(
    Array.from({ length: SITES }, (_, s) =>
      startGateway({
        family: "new-api",
        latencyMs: LATENCY_MS,
        users: Array.from({ length: PER_SITE }, (_, u) => {
          const h = demoHistory({ seed: 900 + s * PER_SITE + u, days: 3, callsPerDay: 60 });
          return {
            accessToken: `bench-ws-${s}-${u}-0123456789abcdef`,
            data: newApiUser(1000 + u, {
              username: `ws${s}-${u}`,
              quota: h.totals.quota,
              used_quota: h.totals.usedQuota,
              request_count: h.totals.requestCount,
            }),
            logs: h.logs,
            tokens: h.tokens,
          };
        }),
      }),
    ),
  );
  const store = tempSqlite();
  const apps: RunningApp[] = [];
  try {
    const siteIds: number[] = [];
    for (const [i, g] of gateways.entries()) {
      siteIds.push((await siteRegistry(store.db).add({ name: `站点 ${i + 1}`, url: g.url })).id);
    }
    const common = {
      DATABASE_URL: store.url,
      DATA_DIR: store.dir,
      LOGIN_RATE_LIMIT: "0",
      SESSION_PASSWORD: "bench-password-0123456789-abcdefghijklmnop",
      SITE_REQUESTS_PER_MINUTE: String(PER_MINUTE),
      JOB_TICK_SECONDS: String(TICK_SECONDS),
    };
    const busy = await startApp({ ...common, LEDGER_SYNC_MINUTES: String(INTERVAL_MINUTES) });
    apps.push(busy);
    const idle = await startApp({ ...common, LEDGER_SYNC_MINUTES: "0" });
    apps.push(idle);

    const post = async (base: string, path: string, body: unknown, token?: string) => {
      const res = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      return (await res.json()) as { success: boolean; message?: string; data?: { token?: string } };
    };
    const made = await post(idle.url, "/api/workspace/register", {
      name: "两百个账户",
      password: "bench-workspace-password",
    });
    const token = made.data?.token ?? "";
    if (!token) throw new Error(`workspace: ${made.message ?? "?"}`);
    // 200 accounts saved through the server that runs no jobs (20 sign-ins per site, in its budget).
    for (let u = 0; u < PER_SITE; u++) {
      await Promise.all(
        siteIds.map(async (siteId, s) => {
          const added = await post(
            idle.url,
            "/api/workspace/accounts",
            { siteId, userId: 1000 + u, accessToken: `bench-ws-${s}-${u}-0123456789abcdef` },
            token,
          );
          if (!added.success) throw new Error(`account ${s}/${u}: ${added.message ?? "?"}`);
        }),
      );
    }
    const accounts = SITES * PER_SITE;

    /** Every account's last completed sync (ms), straight from the store. */
    const syncedAts = async () =>
      (await store.db.ledgerSync.findMany({ select: { syncedAt: true } })).map((r) => r.syncedAt?.getTime() ?? 0);
    const failures = () => store.db.ledgerSync.count({ where: { lastError: { not: null } } });

    // The busy server's runner backfills all 200 (every site within its budget).
    const started = Date.now();
    for (;;) {
      const at = await syncedAts();
      if (at.filter((x) => x > 0).length >= accounts) break;
      if (Date.now() - started > 20 * 60_000) throw new Error(`first syncs: ${at.filter((x) => x > 0).length} of 200`);
      await sleep(2000);
    }
    const firstSyncSeconds = (Date.now() - started) / 1000;

    // The runner at work: live requests timed on both servers, round by round; RSS and the syncs sampled.
    const live = (app: RunningApp) =>
      load(`${app.url}/api/workspace/accounts`, { authorization: `Bearer ${token}` }, 2);
    const p99Busy: number[] = [];
    const p99Idle: number[] = [];
    const rss: number[] = [];
    const intervalMs = INTERVAL_MINUTES * 60_000;
    let longestWait = 0;
    const settleAt = Date.now() + 1.5 * intervalMs + TICK_SECONDS * 1000;
    const end = Date.now() + RUN_MINUTES * 60_000;
    while (Date.now() < end) {
      p99Busy.push((await live(busy)).p99);
      p99Idle.push((await live(idle)).p99);
      rss.push(rssMb(busy.pid));
      if (Date.now() > settleAt) {
        const now = Date.now();
        for (const at of await syncedAts()) longestWait = Math.max(longestWait, now - at);
      }
      await sleep(5000);
    }
    // 全部账户 once the runner has kept every account synced a while, as the page asks for it: the list, the rows the ledger holds fresh in one answer, then
    // every other row through the streaming batch link (10 a batch).
    const client = createTRPCClient<AppRouter>({
      links: [
        httpBatchStreamLink({
          url: `${busy.url}/api/trpc`,
          maxItems: 10,
          headers: { authorization: `Bearer ${token}` },
        }),
      ],
    });
    const page = async () => {
      const t = performance.now();
      const list = await client.account.list.query();
      const stored = await client.account.storedRows.query({ tz: "Asia/Shanghai" });
      let first = stored.rows.length > 0 ? performance.now() - t : Number.POSITIVE_INFINITY;
      let healthy = stored.rows.filter((r) => r.row.state === "ok").length;
      const have = new Set(stored.rows.map((r) => r.key));
      await Promise.all(
        list.accounts
          .filter((a) => !have.has(a.key))
          .map(async (a) => {
            const row = await client.account.overviewRow.query({ key: a.key, tz: "Asia/Shanghai" });
            first = Math.min(first, performance.now() - t);
            if (row.state === "ok") healthy++;
          }),
      );
      return { first, all: performance.now() - t, healthy };
    };
    // One account's live summary (the active one; its site asked, three calls side by side).
    const single = () => client.account.summary.query({ tz: "Asia/Shanghai", refresh: true });
    const singles: number[] = [];
    const pages: { first: number; all: number; healthy: number }[] = [];
    for (let r = 0; r < 5; r++) {
      singles.push(await timed(single));
      pages.push(await page());
      await sleep(2000);
    }

    return {
      accounts,
      firstSyncSeconds,
      singleSummaryMs: median(singles),
      firstRowMs: median(pages.map((p) => p.first)),
      allRowsMs: median(pages.map((p) => p.all)),
      healthyRows: Math.min(...pages.map((p) => p.healthy)),
      longestWaitSeconds: longestWait / 1000,
      intervalSeconds: intervalMs / 1000,
      peakWindowPerSite: peakWindow(gateways),
      syncFailures: await failures(),
      p99Busy: median(p99Busy),
      p99Idle: median(p99Idle),
      rssStart: rss[0] ?? 0,
      rssEnd: rss.at(-1) ?? 0,
      runMinutes: RUN_MINUTES,
    };
  } finally {
    await Promise.all(apps.map((a) => a.stop()));
    await Promise.all(gateways.map((g) => g.close()));
    await store.cleanup();
  }
}

export function workspaceLines(w: WorkspaceFigures): string[] {
  const ok = (pass: boolean) => (pass ? "✅" : "❌");
  const f2 = (n: number) => n.toFixed(2);
  return [
    "",
    `Workspace: ${w.accounts} accounts over ${SITES} stand-in sites (${PER_SITE} each, ${LATENCY_MS} ms answers, ` +
      `SITE_REQUESTS_PER_MINUTE=${PER_MINUTE}); the runner at LEDGER_SYNC_MINUTES=${INTERVAL_MINUTES} for ${w.runMinutes} min ` +
      `(the work of ${w.runMinutes * 5} min at the default 10, five times compressed)`,
    "",
    "| figure | goal | result |",
    "|---|---|---|",
    `| first backfill of all ${w.accounts} accounts by the runner | report | ${w.firstSyncSeconds.toFixed(0)} s |`,
    `| 全部账户: first row shown | < 1 s | ${ok(w.firstRowMs < 1000)} ${Math.round(w.firstRowMs)} ms |`,
    `| 全部账户: every healthy row shown ÷ one account's live summary | < 1.5 | ${ok(w.allRowsMs / w.singleSummaryMs < 1.5)} ${f2(w.allRowsMs / w.singleSummaryMs)} (${Math.round(w.allRowsMs)} ms / ${Math.round(w.singleSummaryMs)} ms; ${w.healthyRows} of ${w.accounts} ok) |`,
    `| longest any account waited for its next sync (after the first 1.5 intervals) ÷ the interval | ≤ 1.25 | ${ok(w.longestWaitSeconds / w.intervalSeconds <= 1.25)} ${f2(w.longestWaitSeconds / w.intervalSeconds)} (${Math.round(w.longestWaitSeconds)} s / ${w.intervalSeconds} s) |`,
    `| most calls one site saw in any 60 s | ≤ ${PER_MINUTE} | ${ok(w.peakWindowPerSite <= PER_MINUTE)} ${w.peakWindowPerSite} |`,
    `| accounts whose last sync failed | 0 | ${ok(w.syncFailures === 0)} ${w.syncFailures} |`,
    `| p99 of \`GET /api/workspace/accounts\` (200 rows), runner busy ÷ idle | ≤ 1.2 | ${ok(w.p99Busy / w.p99Idle <= 1.2)} ${f2(w.p99Busy / w.p99Idle)} (${w.p99Busy} ms / ${w.p99Idle} ms) |`,
    `| busy server's RSS, end − start of the run | < +50 MB | ${ok(w.rssEnd - w.rssStart < 50)} ${w.rssEnd - w.rssStart >= 0 ? "+" : ""}${w.rssEnd - w.rssStart} MB (${w.rssStart} → ${w.rssEnd} MB) |`,
  ];
}
