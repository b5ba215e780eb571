/**
 * Prices for `npm run bench`: the comparison of one model and the whole table over 20 sites × 300
 * models (one account each), and 如果在别处 over an account with 1,000,000 ledger entries in 30
 * days, on the store given. Prices and entries are written straight to the store.
 */
import type { ModelPrice } from "../src/server/gateway/prices";
import type { Reader } from "../src/server/ledger/analytics";
import { ledgerStore, type EntryRow } from "../src/server/ledger/store";
import { compareModel, priceTable, type PricedAccount } from "../src/server/prices/compare";
import { whatIf } from "../src/server/prices/whatif";
import { priceStore } from "../src/server/prices/store";
import { siteRegistry } from "../src/server/sites/registry";
import { UNPROBED } from "../src/server/gateway/families";
import { tempPostgres, tempSqlite } from "../tests/support/db";

const SITES = 20;
const MODELS = 300;
const ENTRIES = Number(process.env.BENCH_PRICE_ENTRIES || 1_000_000);
const DAYS = 30;

export type PriceFigures = { kind: string; compareMs: number; tableMs: number; whatIfMs: number; entries: number };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
async function timed(run: () => Promise<unknown>, n = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await run();
    times.push(performance.now() - t);
  }
  return median(times);
}

export async function benchPrices(kind: "sqlite" | "postgres"): Promise<PriceFigures> {
  const store = kind === "sqlite" ? tempSqlite() : await tempPostgres();
  try {
    const db = store.db;
    const now = new Date();
    const accounts: PricedAccount[] = [];
    for (let s = 0; s < SITES; s++) {
      const site = await siteRegistry(db).add({ name: `价格站 ${s + 1}`, url: `http://127.0.0.1:${21000 + s}` });
      const prices: ModelPrice[] = Array.from({ length: MODELS }, (_, m) => ({
        model: `model-${String(m).padStart(3, "0")}`,
        inputPerMillionUsd: 0.1 + ((m * 7 + s * 13) % 50) / 10,
        outputPerMillionUsd: 0.4 + ((m * 11 + s * 3) % 80) / 10,
        perCallUsd: null,
        groups: ["default"],
      }));
      await priceStore(db).recordSite(site.id, { prices, published: true, groupRatios: { default: 1 } }, now);
      const owner = { siteId: site.id, siteUserId: 5000 + s };
      await priceStore(db).recordAccount(owner, {
        group: "default",
        groupRatio: 1 + (s % 5) / 10,
        models: prices.map((p) => p.model),
        derived: [],
        readAt: now,
        error: null,
      });
      const reader: Reader = {
        ...owner,
        key: String(s + 1),
        sessionId: "",
        site: { id: site.id, name: site.name },
        userId: owner.siteUserId,
        username: `user${s}`,
        alias: null,
        quotaPerUnit: 500_000,
        money: UNPROBED.money,
      };
      accounts.push({
        reader,
        account: {
          sessionId: "",
          siteId: site.id,
          siteUrl: site.url,
          siteUserId: owner.siteUserId,
          userId: owner.siteUserId,
        },
      });
    }
    // The first account's million calls over 30 days, over 20 of the models.
    const first = accounts[0]!.reader;
    await db.ledgerSync.create({
      data: {
        siteId: first.siteId,
        siteUserId: BigInt(first.siteUserId),
        holder: "bench",
        leaseUntil: new Date(Date.now() + 3_600_000),
      },
    });
    const end = Math.floor(Date.now() / 1000);
    const start = end - DAYS * 86_400;
    const step = (end - start) / ENTRIES;
    for (let i = 0; i < ENTRIES; i += 20_000) {
      const rows: EntryRow[] = [];
      for (let j = i; j < Math.min(ENTRIES, i + 20_000); j++) {
        rows.push({
          at: Math.floor(start + j * step),
          fingerprint: `p${j}`,
          ordinal: 0,
          type: "consume",
          model: `model-${String(j % 20).padStart(3, "0")}`,
          tokenName: "默认",
          quota: 500 + (j % 300),
          promptTokens: 800 + (j % 900),
          completionTokens: 100 + (j % 400),
          durationMs: 500,
          stream: false,
          content: "",
          detail: "",
        });
      }
      await ledgerStore(db).commit(first, rows, "bench", end);
    }
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const range = { from: day((start + 86_400) * 1000), to: day(end * 1000), tz: "UTC" };
    const compareMs = await timed(() => compareModel(db, accounts, "model-123"));
    const tableMs = await timed(() => priceTable(db, accounts));
    const whatIfMs = await timed(() => whatIf(db, accounts, range));
    return { kind, compareMs, tableMs, whatIfMs, entries: ENTRIES };
  } finally {
    await store.cleanup();
  }
}

export function priceLines(results: PriceFigures[]): string[] {
  const ok = (pass: boolean) => (pass ? "✅" : "❌");
  const first = results[0];
  if (!first) return [];
  return [
    "",
    `Prices: ${SITES} sites × ${MODELS} models (an account on each), what-if over ${first.entries} ledger entries in ${DAYS} days (median of 5)`,
    "",
    `| figure | goal | ${results.map((r) => r.kind).join(" | ")} |`,
    `|---|---|${results.map(() => "---|").join("")}`,
    `| one model compared across the accounts | < 200 ms | ${results.map((r) => `${ok(r.compareMs < 200)} ${Math.round(r.compareMs)} ms`).join(" | ")} |`,
    `| the whole table (every model × every account) | < 200 ms | ${results.map((r) => `${ok(r.tableMs < 200)} ${Math.round(r.tableMs)} ms`).join(" | ")} |`,
    `| 如果在别处 over the range | < 200 ms | ${results.map((r) => `${ok(r.whatIfMs < 200)} ${Math.round(r.whatIfMs)} ms`).join(" | ")} |`,
  ];
}
