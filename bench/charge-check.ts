/**
 * 核对 for `npm run bench`: an account with 1,000,000 consume entries over 30 days, each logging its
 * new-api ratios (one in a hundred charged a quarter more than they make, one model billed above
 * the site's list), on the store given. Times the ledger's commit of the entries (the ingest, whose
 * path 核对 leaves alone) beside the verifying pass over the same entries, then 核对 over the 30
 * days (median of 5) and the flagged entries' CSV.
 */
import type { ModelPrice } from "../src/server/gateway/prices";
import type { Reader } from "../src/server/ledger/analytics";
import { verifyCharges } from "../src/server/ledger/check";
import { chargeCheck } from "../src/server/ledger/check-view";
import { ledgerStore, type EntryRow } from "../src/server/ledger/store";
import { checkCsv } from "../src/server/exports/check-csv";
import { listSource } from "../src/server/prices/lists";
import { priceStore } from "../src/server/prices/store";
import { siteRegistry } from "../src/server/sites/registry";
import { UNPROBED } from "../src/server/gateway/families";
import { tempPostgres, tempSqlite } from "../tests/support/db";
import { add, dec, mul, roundHalfAway } from "../src/shared/decimal";

const ENTRIES = Number(process.env.BENCH_CHECK_ENTRIES || 1_000_000);
const DAYS = 30;
const BATCH = 20_000;
const MODELS = ["gpt-4o-mini", "gpt-4o", "claude-sonnet-4", "deepseek-chat", "gemini-2.5-flash"];
/** USD per 1M input tokens and the completion ratio; claude-sonnet-4's list says 0.8 × what it bills. */
const RATES: Record<string, [number, number]> = {
  "gpt-4o-mini": [0.15, 4],
  "gpt-4o": [2.5, 4],
  "claude-sonnet-4": [3, 5],
  "deepseek-chat": [0.27, 4],
  "gemini-2.5-flash": [0.3, 8.3333],
};

export type CheckFigures = {
  kind: string;
  entries: number;
  ingestMs: number;
  passMs: number;
  checkMs: number;
  csvMs: number;
  csvRows: number;
  differs: number;
  listDiffers: number;
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

export async function benchChargeCheck(kind: "sqlite" | "postgres"): Promise<CheckFigures> {
  const store = kind === "sqlite" ? tempSqlite() : await tempPostgres();
  try {
    const db = store.db;
    const site = await siteRegistry(db).add({ name: "核对站", url: "http://127.0.0.1:21999" });
    const end = Math.floor(Date.now() / 1000);
    const start = end - DAYS * 86_400;
    const prices: ModelPrice[] = MODELS.map((m) => {
      const [input, completion] = RATES[m]!;
      const listed = m === "claude-sonnet-4" ? 0.8 : 1;
      return {
        model: m,
        inputPerMillionUsd: input * listed,
        outputPerMillionUsd: input * completion * listed,
        perCallUsd: null,
        groups: ["default"],
      };
    });
    await priceStore(db).recordSite(
      site.id,
      { prices, published: true, groupRatios: { default: 1 } },
      new Date(start * 1000),
    );
    const owner = { siteId: site.id, siteUserId: 7001 };
    await db.ledgerSync.create({
      data: {
        ...owner,
        siteUserId: BigInt(owner.siteUserId),
        holder: "bench",
        leaseUntil: new Date(end * 1000 + 3_600_000),
      },
    });
    const step = (end - start) / ENTRIES;
    let ingestMs = 0;
    for (let i = 0; i < ENTRIES; i += BATCH) {
      const rows: EntryRow[] = [];
      for (let j = i; j < Math.min(ENTRIES, i + BATCH); j++) {
        const model = MODELS[j % MODELS.length]!;
        const [input, completion] = RATES[model]!;
        const ratio = input / 2;
        const prompt = 300 + ((j * 37) % 5000);
        const out = 20 + ((j * 11) % 800);
        // Charged as new-api charges: exact decimals of the ratios it logs, rounded once.
        const fair = Math.max(1, roundHalfAway(mul(add(dec(prompt), mul(dec(out), dec(completion))), dec(ratio))));
        rows.push({
          at: Math.floor(start + j * step),
          fingerprint: `c${j}`,
          ordinal: 0,
          type: "consume",
          model,
          tokenName: "默认",
          quota: j % 100 === 7 ? Math.round(fair * 1.25) : fair,
          promptTokens: prompt,
          completionTokens: out,
          durationMs: 900,
          stream: true,
          content: "",
          detail: JSON.stringify({
            group: "default",
            request_id: `r${j}`,
            model_ratio: ratio,
            group_ratio: 1,
            completion_ratio: completion,
            frt: 600,
          }),
        });
      }
      const t = performance.now();
      await ledgerStore(db).commit(owner, rows, "bench", end);
      ingestMs += performance.now() - t;
    }
    // The pass until nothing is left (on PostgreSQL the first only marks its horizon).
    const lists = listSource(db);
    const t = performance.now();
    for (let passes = 0; ; passes++) {
      const looked = await verifyCharges(db, lists, { maxBatches: 1000 });
      if (looked === 0 && passes > 0) break;
    }
    const passMs = performance.now() - t;
    const reader: Reader = {
      ...owner,
      key: "1",
      sessionId: "",
      site: { id: site.id, name: site.name },
      userId: owner.siteUserId,
      username: "bench",
      alias: null,
      quotaPerUnit: 500_000,
      money: UNPROBED.money,
    };
    const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
    const q = { from: day(start), to: day(end), tz: "UTC" };
    const times: number[] = [];
    let report = await chargeCheck(db, [reader], q);
    for (let i = 0; i < 5; i++) {
      const s = performance.now();
      report = await chargeCheck(db, [reader], q);
      times.push(performance.now() - s);
    }
    const c = performance.now();
    let csvRows = 0;
    const reading = checkCsv(db, [reader], q, undefined, (rows) => (csvRows = rows)).getReader();
    while (!(await reading.read()).done);
    const csvMs = performance.now() - c;
    return {
      kind,
      entries: ENTRIES,
      ingestMs,
      passMs,
      checkMs: median(times),
      csvMs,
      csvRows,
      differs: report.totals.differs,
      listDiffers: report.totals.listDiffers,
    };
  } finally {
    await store.cleanup();
  }
}

export function checkLines(results: CheckFigures[]): string[] {
  const ok = (pass: boolean) => (pass ? "✅" : "❌");
  const first = results[0];
  if (!first) return [];
  const rate = (n: number, ms: number) => `${Math.round(n / (ms / 1000)).toLocaleString("en")}/s`;
  return [
    "",
    `核对: ${first.entries.toLocaleString("en")} consume entries of one account over ${DAYS} days, each logging its ratios (1 % charged above them, one model of five above the site's list)`,
    "",
    `| figure | goal | ${results.map((r) => r.kind).join(" | ")} |`,
    `|---|---|${results.map(() => "---|").join("")}`,
    `| ingest: the ledger's commit of the entries (unchanged by 核对) | report | ${results.map((r) => `${Math.round(r.ingestMs / 1000)} s (${rate(r.entries, r.ingestMs)})`).join(" | ")} |`,
    `| the verifying pass over the same entries, after ingest | report | ${results.map((r) => `${Math.round(r.passMs / 1000)} s (${rate(r.entries, r.passMs)})`).join(" | ")} |`,
    `| 核对 over the ${DAYS} days (median of 5) | < 200 ms | ${results.map((r) => `${ok(r.checkMs < 200)} ${Math.round(r.checkMs)} ms`).join(" | ")} |`,
    `| entries found: against their ratios / against the list | ${first.entries / 100} / ${first.entries / 5} | ${results.map((r) => `${ok(r.differs === r.entries / 100 && r.listDiffers === r.entries / 5)} ${r.differs} / ${r.listDiffers}`).join(" | ")} |`,
    `| the flagged entries' CSV | report | ${results.map((r) => `${Math.round(r.csvMs)} ms (${r.csvRows} rows)`).join(" | ")} |`,
  ];
}
