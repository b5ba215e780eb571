/**
 * `npm run bench`: the session check and sign-in cost, every figure taken in this one run so the
 * ratios hold on a noisy machine. Starts the production build on SQLite (and on PostgreSQL when
 * it is reachable), a gateway stand-in, and drives load with autocannon from this process.
 *
 *   npm run bench                 # both stores (PostgreSQL when reachable)
 *   BENCH_STORES=sqlite npm run bench
 *   BENCH_SECONDS=5 BENCH_ROUNDS=3 npm run bench
 *   BENCH_LEDGER=0 npm run bench  # without the usage ledger's million-entry runs
 *   BENCH_WORKSPACE=0 npm run bench  # without the 200-account workspace (about 11 minutes)
 *   BENCH_ALERTS=0 npm run bench  # without the alerts' 1,000-account evaluation
 *   BENCH_PRICES=0 npm run bench  # without the price comparison over 20 sites × 300 models
 *   BENCH_CHECK=0 npm run bench   # without 核对 over 1,000,000 entries (about 2 minutes a store)
 *   BENCH_INSTANCES=0 npm run bench  # without the many-instance runs (PostgreSQL; about 8 minutes)
 *   BENCH_SCALE=0 npm run bench   # without the runner's claims from 1,000,000 accounts
 *   BENCH_BACKFILL=0 npm run bench  # without live requests beside a 150,000-entry backfill (about 8 minutes)
 *   BENCH_FLOODS=0 npm run bench  # without the floods of oversized bodies beside /api/health
 *   BENCH_SIMULATION=1 npm run bench  # with the deployment at scale (PostgreSQL; SIM_MINUTES, default 30, and the fill)
 */
import { cpus, totalmem } from "node:os";
import pg from "pg";
import { buildIfNeeded } from "../scripts/serve";
import { benchLedger, ledgerLines, type LedgerFigures } from "./ledger";
import { alertLines, benchAlerts, type AlertFigures } from "./alerts";
import { benchBudget } from "./budget";
import { benchPrices, priceLines, type PriceFigures } from "./prices";
import { benchChargeCheck, checkLines, type CheckFigures } from "./charge-check";
import { benchInstances, instanceLines } from "./instances";
import { benchOverview } from "./overview";
import { benchFloods, floodLines } from "./floods";
import { benchWorkspace, workspaceLines } from "./workspace";
import { bench } from "./sessions";
import { benchClaims, claimLines, type ClaimFigures } from "./claims";
import { backfillRows, benchBackfill, type BackfillFigures } from "./backfill";
import { benchSimulation, simulationLines } from "./simulation";
import { SECONDS, ROUNDS } from "./common";

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

await buildIfNeeded();
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

const ledgerResults: LedgerFigures[] = [];
if (process.env.BENCH_LEDGER !== "0") {
  for (const kind of results.map((r) => r.kind)) {
    console.error(`[bench] usage ledger, ${kind} …`);
    ledgerResults.push(await benchLedger(kind));
  }
}

const alertResults: AlertFigures[] = [];
if (process.env.BENCH_ALERTS !== "0") {
  for (const kind of results.map((r) => r.kind)) {
    console.error(`[bench] alerts of 1,000 accounts, ${kind} …`);
    alertResults.push(await benchAlerts(kind));
  }
}

const priceResults: PriceFigures[] = [];
if (process.env.BENCH_PRICES !== "0") {
  for (const kind of results.map((r) => r.kind)) {
    console.error(`[bench] prices, ${kind} …`);
    priceResults.push(await benchPrices(kind));
  }
}

const checkResults: CheckFigures[] = [];
if (process.env.BENCH_CHECK !== "0") {
  for (const kind of results.map((r) => r.kind)) {
    console.error(`[bench] 核对 over 1,000,000 entries, ${kind} …`);
    checkResults.push(await benchChargeCheck(kind));
  }
}

const claimResults: ClaimFigures[] = [];
if (process.env.BENCH_SCALE !== "0") {
  for (const kind of results.map((r) => r.kind)) {
    console.error(`[bench] the runner's claims from 1,000,000 accounts, ${kind} …`);
    claimResults.push(await benchClaims(kind));
  }
}

const backfillResults: BackfillFigures[] = [];
if (process.env.BENCH_BACKFILL !== "0") {
  for (const kind of results.map((r) => r.kind)) {
    console.error(`[bench] live requests beside a backfill, ${kind} …`);
    backfillResults.push(await benchBackfill(kind));
  }
}

// The deployment at scale is asked for (about 35 minutes at its defaults), on PostgreSQL only.
const simulation =
  process.env.BENCH_SIMULATION === "1" && results.some((r) => r.kind === "postgres") ? await benchSimulation() : null;

console.error("[bench] overview of 20 accounts …");
const overviewFigures = process.env.BENCH_OVERVIEW === "0" ? null : await benchOverview();
console.error("[bench] floods of oversized bodies …");
const floods = process.env.BENCH_FLOODS === "0" ? null : await benchFloods();
console.error("[bench] site budget …");
const budget = process.env.BENCH_BUDGET === "0" ? null : await benchBudget();
const instances =
  process.env.BENCH_INSTANCES === "0" || !results.some((r) => r.kind === "postgres") ? null : await benchInstances();
console.error("[bench] workspace of 200 accounts …");
const workspace = process.env.BENCH_WORKSPACE === "0" ? null : await benchWorkspace();

const lines = [
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ` +
    `${ROUNDS} rounds × ${SECONDS} s per figure, 10 connections unless noted; ${new Date().toISOString()}`,
  "",
  `| figure | goal | ${results.map((r) => r.kind).join(" | ")} |`,
  `|---|---|${results.map(() => "---|").join("")}`,
  `| \`me\` Bearer req/s ÷ \`me\` without token (401) req/s | ≥ 0.85 | ${results.map((r) => `${ok(r.figures.bearerVsNone >= 0.85)} ${f2(r.figures.bearerVsNone)} (${Math.round(r.rps.bearer)} / ${Math.round(r.rps.none)})`).join(" | ")} |`,
  `| \`me\` cookie ÷ \`me\` Bearer | ≥ 0.9 | ${results.map((r) => `${ok(r.figures.cookieVsBearer >= 0.9)} ${f2(r.figures.cookieVsBearer)} (${Math.round(r.rps.cookie)} / ${Math.round(r.rps.bearer)})`).join(" | ")} |`,
  `| \`me\` with 1 000 000 stored sessions (100 000 live) ÷ with 10 | ≥ 0.95 | ${results.map((r) => `${ok(r.figures.manyVsFew >= 0.95)} ${f2(r.figures.manyVsFew)} (${Math.round(r.rps.many)} / ${Math.round(r.rps.few)}; rounds ${r.figures.manyVsFewRounds.map(f2).join(", ")})`).join(" | ")} |`,
  `| \`me\` req/s ÷ cached \`account.summary\` req/s (cost ratio) | ≤ 1.2 | ${results.map((r) => `${ok(r.figures.summaryCost <= 1.2)} ${f2(r.figures.summaryCost)} (${Math.round(r.rps.bearer)} / ${Math.round(r.rps.summary)})`).join(" | ")} |`,
  `| \`me\` req/s ÷ cached \`account.logs\` page of 20 req/s (cost ratio) | ≤ 1.2 | ${results.map((r) => `${ok(r.figures.logsCost <= 1.2)} ${f2(r.figures.logsCost)} (${Math.round(r.rps.bearer)} / ${Math.round(r.rps.logs)})`).join(" | ")} |`,
  `| login median − gateway direct median | ≤ 3 ms | ${results.map((r) => `${ok(r.figures.loginOverhead <= 3)} ${f2(r.figures.loginOverhead)} ms (${f2(r.login.login)} − ${f2(r.login.direct)})`).join(" | ")} |`,
  `| framework floor: login with an empty body − gateway direct | report | ${results.map((r) => `${f2(r.figures.floorOverhead)} ms (${f2(r.login.floor)} − ${f2(r.login.direct)})`).join(" | ")} |`,
  `| p99 latency of \`me\` at 50 connections | report | ${results.map((r) => `${r.figures.p99} ms (${Math.round(r.rps.wide)} req/s)`).join(" | ")} |`,
  `| non-2xx answers under load | 0 | ${results.map((r) => `${ok(r.figures.non2xx === 0)} ${r.figures.non2xx}`).join(" | ")} |`,
  `| server RSS after the runs | report (< 300 MB) | ${results.map((r) => `${ok(r.figures.rss < 300)} ${r.figures.rss} MB`).join(" | ")} |`,
];
if (overviewFigures) {
  const o = overviewFigures;
  lines.push(
    "",
    "Overview: 20 accounts on 20 stand-in sites that each answer in 200 ms (median of 5; the hanging case of 3)",
    "",
    "| figure | goal | result |",
    "|---|---|---|",
    `| \`GET /api/accounts/overview\` ÷ one 200 ms call to a site | < 1.5 | ${ok(o.whole / o.single < 1.5)} ${f2(o.whole / o.single)} (${Math.round(o.whole)} ms / ${Math.round(o.single)} ms; ${o.okRows} rows ok) |`,
    `| one site hanging: the other 19 rows shown ÷ one call | < 1.5 | ${ok(o.nineteen / o.single < 1.5)} ${f2(o.nineteen / o.single)} (${Math.round(o.nineteen)} ms) |`,
  );
}
if (budget) {
  lines.push(
    "",
    `Site budget: ${budget.requests} simultaneous requests from 20 accounts on one site (50 ms answers), SITE_REQUESTS_PER_MINUTE=60`,
    "",
    "| figure | goal | result |",
    "|---|---|---|",
    `| calls the site saw (after caching and sharing) | report | ${budget.siteCalls} |`,
    `| most calls in any 60 s window | ≤ 60 | ${ok(budget.peakWindow <= 60)} ${budget.peakWindow} |`,
    `| requests that failed | 0 | ${ok(budget.failed === 0)} ${budget.failed}${budget.failures.length ? ` (${budget.failures.join("; ")})` : ""} |`,
    `| most calls in flight at the site | ≤ 4 | ${ok(budget.peakInFlight <= 4)} ${budget.peakInFlight} |`,
    `| longest request − what the budget requires (${budget.over} calls past it wait one window of 61 s) | small | ${((budget.longest - budget.required) / 1000).toFixed(2)} s (${(budget.longest / 1000).toFixed(2)} s − ${budget.required / 1000} s) |`,
  );
}
if (floods) lines.push(...floodLines(floods));
if (instances) lines.push(...instanceLines(instances));
if (workspace) lines.push(...workspaceLines(workspace));
if (ledgerResults.length > 0) lines.push(...ledgerLines(ledgerResults));
if (alertResults.length > 0) lines.push(...alertLines(alertResults));
if (priceResults.length > 0) lines.push(...priceLines(priceResults));
if (checkResults.length > 0) lines.push(...checkLines(checkResults));
if (claimResults.length > 0) lines.push(...claimLines(claimResults));
if (simulation) lines.push(...simulationLines(simulation));
if (backfillResults.length > 0) {
  lines.push(
    "",
    "Live requests beside a backfill (the runner yields to them)",
    "",
    `| figure | goal | ${backfillResults.map((r) => r.kind).join(" | ")} |`,
    `|---|---|${backfillResults.map(() => "---|").join("")}`,
    ...backfillRows(backfillResults),
  );
}
console.log(lines.join("\n"));
