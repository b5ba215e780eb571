/**
 * Live requests while the runner backfills, for `npm run bench`: a production server on the store
 * with one small account signed in, its `me` p99 measured idle, then while a big account's first
 * sync backfills BENCH_BACKFILL_ENTRIES entries (default 150,000 over 30 days, from a stand-in in
 * its own process, the site budget lifted so the backfill goes as fast as our side allows), then
 * idle again. The ratio is busy ÷ idle p99 (goal ≤ 1.2: background work yields to live requests).
 */
import { load, median, rssMb, SECONDS } from "./common";
import { startSite } from "./ledger";
import { siteRegistry } from "../src/server/sites/registry";
import { tempPostgres, tempSqlite } from "../tests/support/db";
import { request, signInOverHttp } from "../tests/support/http";
import { startApp } from "../tests/support/server";

const ENTRIES = Number(process.env.BENCH_BACKFILL_ENTRIES || 150_000);
/** Connections of the live load (a busy dashboard's worth, not a saturating flood). */
const CONNECTIONS = 10;

export type BackfillFigures = {
  kind: string;
  entries: number;
  idleP99: number[];
  busyP99: number[];
  idleRps: number;
  busyRps: number;
  backfillSeconds: number;
  rssPeak: number;
};

export async function benchBackfill(kind: "sqlite" | "postgres"): Promise<BackfillFigures> {
  const site = await startSite(ENTRIES, 30);
  const store = kind === "sqlite" ? tempSqlite() : await tempPostgres();
  const siteId = (await siteRegistry(store.db).add({ name: "bench", url: site.url })).id;
  const app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    SESSION_PASSWORD: "bench-backfill-session-password-0123456789",
    SITE_REQUESTS_PER_MINUTE: "100000",
    LEDGER_SYNC_MINUTES: "10",
    LEDGER_BACKFILL_DAYS: "31",
  });
  try {
    const small = await signInOverHttp(app.url, { siteId, userId: site.other.id, accessToken: site.other.token });
    const me = `${app.url}/api/auth/me`;
    const headers = { authorization: `Bearer ${small.token}` };
    await load(me, headers, CONNECTIONS); // warm-up
    const idle: Array<{ p99: number; rps: number }> = [];
    for (let i = 0; i < 3; i++) idle.push(await load(me, headers, CONNECTIONS));

    // The big account's sign-in starts its backfill; the live load goes on beside it.
    const big = await signInOverHttp(app.url, { siteId, userId: site.id, accessToken: site.token });
    const started = Date.now();
    const status = async () =>
      (await request(app.url, "/api/usage/status", { headers: { authorization: `Bearer ${big.token}` } })).body
        .data as { running: boolean; syncedAt: string | null; entries: number };
    const busy: Array<{ p99: number; rps: number }> = [];
    let rssPeak = 0;
    let backfillSeconds = 0;
    for (;;) {
      const s = await status();
      if (!s.running && s.syncedAt !== null) {
        backfillSeconds = (Date.now() - started) / 1000;
        break;
      }
      const run = await load(me, headers, CONNECTIONS);
      // A round counts as busy only when the backfill ran through all of it.
      const after = await status();
      rssPeak = Math.max(rssPeak, rssMb(app.pid));
      if (after.running) busy.push(run);
    }
    for (let i = 0; i < 3; i++) idle.push(await load(me, headers, CONNECTIONS));
    const entries = (await status()).entries;
    return {
      kind,
      entries,
      idleP99: idle.map((r) => r.p99),
      busyP99: busy.map((r) => r.p99),
      idleRps: median(idle.map((r) => r.rps)),
      busyRps: median(busy.map((r) => r.rps)),
      backfillSeconds,
      rssPeak,
    };
  } finally {
    await app.stop();
    site.stop();
    await store.cleanup();
  }
}

/** The figures' rows for docs/benchmarks.md. */
export function backfillRows(results: BackfillFigures[]): string[] {
  const cols = (f: (r: BackfillFigures) => string) => results.map(f).join(" | ");
  const ratio = (r: BackfillFigures) => median(r.busyP99) / Math.max(1, median(r.idleP99));
  const ok = (pass: boolean) => (pass ? "✅" : "❌");
  return [
    `| \`me\` p99 while a ${ENTRIES.toLocaleString("en-US")}-entry backfill runs ÷ idle (${CONNECTIONS} connections, ${SECONDS} s rounds) | ≤ 1.2 | ${cols((r) => `${ok(ratio(r) <= 1.2)} ${ratio(r).toFixed(2)} (${median(r.busyP99)} / ${median(r.idleP99)} ms; ${r.busyP99.length} busy rounds)`)} |`,
    `| \`me\` req/s while it runs ÷ idle | report | ${cols((r) => `${(r.busyRps / Math.max(1, r.idleRps)).toFixed(2)} (${Math.round(r.busyRps)} / ${Math.round(r.idleRps)})`)} |`,
    `| that backfill beside the live load: entries, seconds, server RSS peak | report | ${cols((r) => `${r.entries.toLocaleString("en-US")} in ${r.backfillSeconds.toFixed(0)} s, ${r.rssPeak} MB`)} |`,
  ];
}
