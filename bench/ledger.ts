/**
 * The usage ledger's figures for `npm run bench`: ingest from a local stand-in with the site budget
 * lifted (what our side costs, beside reading the same pages without storing them), memory over a
 * 1,000,000-entry backfill, and usage.summary over 1,000,000 entries (by model over 30 days; by day
 * over 400 days).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import path from "node:path";
import { readersOf, usageSummary } from "../src/server/ledger/analytics";
import { statementPdf } from "../src/server/exports/statement";
import { streamBytes } from "../tests/support/http";
import { syncLedger } from "../src/server/ledger/sync";
import { accountOf } from "../src/server/accounts/overview";
import { ledgerReader } from "../src/server/site-data/site-data";
import { dayIn } from "../src/server/core/time";
import { ledgerStore, type EntryRow } from "../src/server/ledger/store";
import { sessionStore } from "../src/server/session/store";
import { siteRegistry } from "../src/server/sites/registry";
import { callerFor } from "../tests/support/caller";
import { tempPostgres, tempSqlite } from "../tests/support/db";
import { signInOverHttp } from "../tests/support/http";
import { startApp } from "../tests/support/server";

const ENTRIES = Number(process.env.BENCH_LEDGER_ENTRIES || 1_000_000);
const LIFTED = { timeoutMs: 30_000, perMinute: 1_000_000_000, accountPerMinute: 1_000_000_000 };

export type Site = {
  url: string;
  token: string;
  id: number;
  entries: number;
  days: number;
  other: { id: number; token: string };
  stop: () => void;
};

/** The stand-in in its own process, so its work does not count as ours. */
export function startSite(entries: number, days: number): Promise<Site> {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "ledger-site.ts")], {
    env: { ...process.env, BENCH_ENTRIES: String(entries), BENCH_DAYS: String(days) },
    stdio: ["pipe", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`stand-in exited (${code})`)));
    createInterface({ input: child.stdout }).once("line", (line) => {
      const info = JSON.parse(line) as Omit<Site, "stop">;
      resolve({ ...info, stop: () => child.stdin.end() });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function timedRuns(n: number, run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  return median(times);
}

export type LedgerFigures = {
  kind: string;
  entries: number;
  readOnlySeconds: number;
  ingestSeconds: number;
  rssStart: number;
  rssHalf: number;
  rssPeak: number;
  rssEnd: number;
  storeOnlyPerSecond: number;
  byModel30Ms: number;
  byDay400Ms: number;
  hourRows: number;
  /** The CSV export of the million entries through the production server. */
  csv: { seconds: number; rows: number; mb: number; rssStart: number; rssPeak: number };
  statementMs: number;
  pdfEntries: number;
};

/** A process's resident memory in bytes. */
const rssOf = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;

export async function benchLedger(kind: "sqlite" | "postgres"): Promise<LedgerFigures> {
  const site = await startSite(ENTRIES, 30);
  const store = kind === "sqlite" ? tempSqlite() : await tempPostgres();
  try {
    const { db } = store;
    const { id } = await siteRegistry(db).add({ name: "bench", url: site.url });
    const { api } = callerFor(db, {}, { ledgerSyncMinutes: 0 });
    const login = await api.auth.login({ userId: site.id, accessToken: site.token, siteId: id });
    if (!login.success) throw new Error(login.message);
    const session = (await sessionStore(db).findValid(login.data.sessionToken))!;
    const account = accountOf(session);
    const deps = { db, ...LIFTED };

    // The site's side alone: every page of the window, read and parsed, nothing stored.
    const reader = await ledgerReader(account, deps);
    const now = Math.floor(Date.now() / 1000);
    const from = now - 31 * 86_400;
    let t = performance.now();
    let read = 0;
    for (let page = 1; ; page++) {
      const p = await reader.logPage({ page, pageSize: 100, from, to: now });
      read += p.items.length;
      if (p.items.length < p.pageSize) break;
    }
    const readOnlySeconds = (performance.now() - t) / 1000;
    if (read !== site.entries) throw new Error(`read ${read} of ${site.entries}`);

    // The backfill, with the process's memory sampled throughout.
    global.gc?.();
    const rssStart = process.memoryUsage().rss;
    const samples: Array<[number, number]> = [];
    const sampler = setInterval(() => samples.push([performance.now(), process.memoryUsage().rss]), 100);
    t = performance.now();
    // One run reads at most LEDGER_LIMITS' pages and bytes; the next goes on where it stopped.
    let added = 0;
    for (let run = 0; run < 10; run++) {
      const result = await syncLedger(db, account, deps, { backfillDays: 31 });
      added += result.added;
      if (result.complete) break;
    }
    const ingestSeconds = (performance.now() - t) / 1000;
    clearInterval(sampler);
    // Flat: the peak of the first half of the backfill against the peak of the whole.
    const midway = t + (ingestSeconds * 1000) / 2;
    const rssHalf = Math.max(rssStart, ...samples.filter(([at]) => at <= midway).map(([, rss]) => rss));
    const rssPeak = Math.max(rssHalf, ...samples.map(([, rss]) => rss));
    global.gc?.();
    const rssEnd = process.memoryUsage().rss;
    if (added !== site.entries) throw new Error(`stored ${added} of ${site.entries}`);

    const today = dayIn("UTC", Date.now());
    const monthAgo = dayIn("UTC", Date.now() - 29 * 86_400_000);
    const byModel30Ms = await timedRuns(15, () =>
      usageSummary(db, [session], { from: monthAgo, to: today, tz: "UTC", groupBy: "model" }),
    );
    // The statement of the month with the most of those entries (the backfill spans 30 days).
    const readers = await readersOf(db, [session]);
    const months = [dayIn("UTC", Date.now() - 15 * 86_400_000).slice(0, 7)];
    let pdfEntries = 0;
    const statementMs = await timedRuns(3, async () => {
      const pdf = await statementPdf(db, readers, { month: months[0] as string, tz: "UTC" });
      await streamBytes(pdf.body);
      pdfEntries = pdf.entries;
    });

    // A second account: 1,000,000 entries over 400 days, written straight to the store.
    const other = { siteId: id, siteUserId: 777 };
    await db.ledgerSync.create({ data: { siteId: id, siteUserId: 777n, holder: "bench" } });
    const span = 400 * 86_400;
    const models = ["gpt-4o", "gpt-4o-mini", "claude-sonnet-4", "deepseek-chat", "gemini-2.5-flash", "o3-mini"];
    const tokens = ["生产服务器", "笔记本", "手机", "CI 测试"];
    t = performance.now();
    for (let start = 0; start < ENTRIES; start += 5000) {
      const rows: EntryRow[] = [];
      for (let i = start; i < Math.min(ENTRIES, start + 5000); i++) {
        rows.push({
          at: now - span + Math.floor((i * span) / ENTRIES),
          fingerprint: `f${i}`,
          ordinal: 0,
          type: "consume",
          model: models[i % models.length] as string,
          tokenName: tokens[(i >> 3) % tokens.length] as string,
          quota: 1000 + (i % 977),
          promptTokens: 500 + (i % 1500),
          completionTokens: 100 + (i % 300),
          durationMs: 1200,
          stream: true,
          content: "",
          detail: "",
        });
      }
      await ledgerStore(db).commit(other, rows, "bench", rows[rows.length - 1]!.at);
    }
    const storeOnlyPerSecond = ENTRIES / ((performance.now() - t) / 1000);
    const otherSession = { ...session, siteUserId: 777, userId: 777 };
    const byDay400Ms = await timedRuns(9, () =>
      usageSummary(db, [otherSession], {
        from: dayIn("UTC", Date.now() - 399 * 86_400_000),
        to: today,
        tz: "Asia/Shanghai",
        groupBy: "day",
      }),
    );
    const hourRows = await db.ledgerHour.count();

    // The first account's million entries as CSV through the production server, its RSS sampled.
    const app = await startApp({
      DATABASE_URL: store.url,
      DATA_DIR: store.dir,
      LEDGER_SYNC_MINUTES: "0",
      SESSION_PASSWORD: "bench-password-0123456789-abcdefghijklmnop",
    });
    let csv: { seconds: number; rows: number; mb: number; rssStart: number; rssPeak: number };
    try {
      const url = `${app.url}/api/export/usage.csv?from=${dayIn("UTC", Date.now() - 31 * 86_400_000)}&to=${today}&tz=UTC`;
      // A session of the same account, made by this server (its own session password).
      const { token } = await signInOverHttp(app.url, { userId: site.id, accessToken: site.token, siteId: id });
      const headers = { authorization: `Bearer ${token}` };
      await (await fetch(url.replace("usage.csv", "count"), { headers })).json();
      const rssStart = rssOf(app.pid);
      let rssPeak = rssStart;
      const sample = setInterval(() => (rssPeak = Math.max(rssPeak, rssOf(app.pid))), 100);
      t = performance.now();
      const res = await fetch(url, { headers });
      if (res.headers.get("content-type") !== "text/csv; charset=utf-8") {
        throw new Error(`export answered ${res.status}: ${(await res.text()).slice(0, 200)}`);
      }
      let lines = 0;
      let bytes = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        bytes += chunk.byteLength;
        const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        for (let at = buf.indexOf(10); at !== -1; at = buf.indexOf(10, at + 1)) lines++;
      }
      clearInterval(sample);
      csv = { seconds: (performance.now() - t) / 1000, rows: lines - 1, mb: bytes / 2 ** 20, rssStart, rssPeak };
    } finally {
      await app.stop();
    }
    return {
      kind,
      entries: site.entries,
      readOnlySeconds,
      ingestSeconds,
      rssStart,
      rssHalf,
      rssPeak,
      rssEnd,
      storeOnlyPerSecond,
      byModel30Ms,
      byDay400Ms,
      hourRows,
      csv,
      statementMs,
      pdfEntries,
    };
  } finally {
    site.stop();
    await store.cleanup();
  }
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
const ok = (pass: boolean) => (pass ? "✅" : "❌");

export function ledgerLines(results: LedgerFigures[]): string[] {
  const cols = (f: (r: LedgerFigures) => string) => results.map(f).join(" | ");
  const rate = (r: LedgerFigures) => r.entries / r.ingestSeconds;
  const n = (results[0]?.entries ?? 0).toLocaleString("en-US");
  return [
    "",
    `Usage ledger: a new-api stand-in (its own process) with ${n} entries over 30 days, site budget lifted`,
    "",
    `| figure | goal | ${results.map((r) => r.kind).join(" | ")} |`,
    `|---|---|${results.map(() => "---|").join("")}`,
    `| backfill ingest, entries/s | ≥ 20,000 | ${cols((r) => `${ok(rate(r) >= 20_000)} ${Math.round(rate(r)).toLocaleString("en-US")} (${r.ingestSeconds.toFixed(1)} s)`)} |`,
    `| ingest time ÷ reading the same pages without storing | report | ${cols((r) => `${(r.ingestSeconds / r.readOnlySeconds).toFixed(2)} (${r.readOnlySeconds.toFixed(1)} s)`)} |`,
    `| RSS during the backfill: start → peak of the first half → peak → end | flat (second half adds < 20 MB) | ${cols((r) => `${ok(r.rssPeak - r.rssHalf < 20 * 2 ** 20)} ${mb(r.rssStart)} → ${mb(r.rssHalf)} → ${mb(r.rssPeak)} → ${mb(r.rssEnd)} MB`)} |`,
    `| store alone (batches of 5,000 with hourly totals), entries/s | report | ${cols((r) => Math.round(r.storeOnlyPerSecond).toLocaleString("en-US"))} |`,
    `| \`usage.summary\` by model, 30 days of ${n} entries (median of 15) | < 100 ms | ${cols((r) => `${ok(r.byModel30Ms < 100)} ${r.byModel30Ms.toFixed(1)} ms`)} |`,
    `| \`usage.summary\` by day, 400 days of ${n} entries, Asia/Shanghai (median of 9) | < 200 ms | ${cols((r) => `${ok(r.byDay400Ms < 200)} ${r.byDay400Ms.toFixed(1)} ms`)} |`,
    `| rows of hourly totals per model and token in the store | report | ${cols((r) => r.hourRows.toLocaleString("en-US"))} |`,
    `| CSV export of those entries through the production server, rows/s | ≥ 100,000 | ${cols((r) => `${ok(r.csv.rows / r.csv.seconds >= 100_000)} ${Math.round(r.csv.rows / r.csv.seconds).toLocaleString("en-US")} (${r.csv.rows.toLocaleString("en-US")} rows, ${Math.round(r.csv.mb)} MB in ${r.csv.seconds.toFixed(1)} s)`)} |`,
    `| PDF statement of a month (median of 3) | < 2 s for 100,000 entries | ${cols((r) => `${ok(r.statementMs < 2000)} ${Math.round(r.statementMs)} ms (${r.pdfEntries.toLocaleString("en-US")} entries)`)} |`,
    `| server RSS growth during that export | < 50 MB | ${cols((r) => `${ok(r.csv.rssPeak - r.csv.rssStart < 50 * 2 ** 20)} ${mb(r.csv.rssPeak - r.csv.rssStart)} MB (${mb(r.csv.rssStart)} → ${mb(r.csv.rssPeak)})`)} |`,
  ];
}
