import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifyCharges } from "../../src/server/ledger/check";
import { ledgerStore } from "../../src/server/ledger/store";
import type { EntryRow } from "../../src/server/ledger/store-sql";
import type { ModelPrice } from "../../src/server/gateway/prices";
import { listSource } from "../../src/server/prices/lists";
import { priceStore } from "../../src/server/prices/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { add, dec, mul, roundHalfAway } from "../../src/shared/decimal";
import { tempStore, type TempDb } from "../support/db";
import { freshProcessState } from "../../src/server/core/process-state";

/**
 * 核对's pass in batches (docs/design.md 27): runs of a few batches each, over a ledger whose ids
 * have a long gap (entries gone) and other entries among the consume ones, verify every consume
 * entry exactly once; the list's second verdict, once the list is read, goes over the same ground
 * in batches too. Each batch takes its turns: before its read and before its transaction.
 */
let store: TempDb;
beforeEach(async () => {
  store = await tempStore();
  freshProcessState();
});
afterEach(() => store.cleanup());

const MODELS = ["gpt-4o-mini", "claude-sonnet-4"] as const;
const RATIO = { "gpt-4o-mini": 0.075, "claude-sonnet-4": 1.5 } as const;
const COMPLETION = 4;
const END = Math.floor(Date.now() / 1000);

/** `n` entries a minute apart: every 4th a refund, every 50th consume charged a quarter more. */
function entries(n: number): EntryRow[] {
  return Array.from({ length: n }, (_, j) => {
    const model = MODELS[j % 2]!;
    const prompt = 300 + ((j * 37) % 5000);
    const out = 20 + ((j * 11) % 800);
    const fair = Math.max(1, roundHalfAway(mul(add(dec(prompt), mul(dec(out), dec(COMPLETION))), dec(RATIO[model]))));
    return {
      at: END - (n - j) * 60,
      fingerprint: `e${j}`,
      ordinal: 0,
      type: j % 4 === 3 ? "refund" : "consume",
      model,
      tokenName: "默认",
      quota: j % 50 === 0 ? Math.round(fair * 1.25) : fair,
      promptTokens: prompt,
      completionTokens: out,
      durationMs: 900,
      stream: false,
      content: "",
      detail: JSON.stringify({
        group: "default",
        model_ratio: RATIO[model],
        group_ratio: 1,
        completion_ratio: COMPLETION,
      }),
    };
  });
}

/** Whether the pass has been through the whole table: its cursor at the last entry, and no site waiting for a list read since. */
async function passDone(listRead: boolean): Promise<boolean> {
  const last = (await store.db.ledgerEntry.aggregate({ _max: { id: true } }))._max.id ?? 0;
  const state = await store.db.ledgerCheckState.findUnique({ where: { id: 1 } });
  return state !== null && state.after >= last && (!listRead || state.pending === "{}");
}

/** Runs of at most three batches until the pass is done; how many runs and turns it took. */
async function passInRuns(listRead: boolean): Promise<{ runs: number; turns: number; looked: number }> {
  const lists = listSource(store.db);
  let turns = 0;
  let looked = 0;
  for (let runs = 1; runs <= 200; runs++) {
    looked += await verifyCharges(store.db, lists, { maxBatches: 3, turn: () => Promise.resolve(void turns++) });
    if (await passDone(listRead)) return { runs, turns, looked };
  }
  throw new Error("the pass did not end");
}

describe("核对's pass in batches", () => {
  it("verifies each consume entry once across short runs, over a long gap in the ids and refunds among them", async () => {
    const db = store.db;
    const site = await siteRegistry(db).add({ name: "批次站", url: "http://127.0.0.1:21998" });
    const owner = { siteId: site.id, siteUserId: 7002 };
    await db.ledgerSync.create({
      data: { siteId: site.id, siteUserId: 7002n, holder: "test", leaseUntil: new Date(END * 1000 + 3_600_000) },
    });
    await ledgerStore(db).commit(owner, entries(6000), "test", END);
    // A long run of ids goes (as retention or a site's entries removed leave them): 3,500 ids.
    const first = (await db.ledgerEntry.aggregate({ _min: { id: true } }))._min.id!;
    await db.ledgerEntry.deleteMany({ where: { id: { gte: first + 1200, lt: first + 4700 } } });
    const consume = await db.ledgerEntry.findMany({ where: { type: "consume" }, select: { quota: true, id: true } });
    expect(consume.length).toBeGreaterThan(1500);

    const { runs, turns, looked } = await passInRuns(false);
    expect(looked).toBe(consume.length);
    // Batches of at most 500 entries, three a run: more than one run, and two turns a batch that read any.
    expect(runs).toBeGreaterThan(1);
    expect(turns).toBeGreaterThanOrEqual(2 * Math.ceil(consume.length / 500));
    const sums = await db.ledgerCheckHour.aggregate({ _sum: { entries: true, checked: true, differs: true } });
    expect(sums._sum.entries).toBe(consume.length);
    expect(sums._sum.checked).toBe(consume.length);
    // Every 50th entry (all consume: 50 is not 3 mod 4) charged a quarter more, and only those.
    const victims = (await db.ledgerEntry.findMany({ select: { id: true } })).filter((e) => (e.id - first) % 50 === 0);
    expect(sums._sum.differs).toBe(victims.length);
    expect(await db.ledgerFlag.count()).toBe(victims.length);

    // The list is read now, Claude listed a fifth below what it bills: its entries get the second
    // verdict, in batches over the same ids, each once.
    const prices: ModelPrice[] = MODELS.map((model) => ({
      model,
      inputPerMillionUsd: RATIO[model] * 2 * (model === "claude-sonnet-4" ? 0.8 : 1),
      outputPerMillionUsd: RATIO[model] * 2 * COMPLETION * (model === "claude-sonnet-4" ? 0.8 : 1),
      perCallUsd: null,
      groups: ["default"],
    }));
    await priceStore(db).recordSite(
      site.id,
      { prices, published: true, groupRatios: { default: 1 } },
      new Date((END - 10 * 86_400) * 1000),
    );
    const second = await passInRuns(true);
    expect(second.looked).toBe(consume.length);
    const after = await db.ledgerCheckHour.aggregate({ _sum: { entries: true, listChecked: true, listDiffers: true } });
    expect(after._sum.entries).toBe(consume.length);
    expect(after._sum.listChecked).toBe(consume.length);
    // Claude's entries (the list is held against the ratios the site logged, not against the charge).
    const claude = await db.ledgerEntry.count({ where: { type: "consume", model: "claude-sonnet-4" } });
    expect(claude).toBeGreaterThan(500);
    expect(after._sum.listDiffers).toBe(claude);
  });

  it("goes on past entries whose figures cannot be checked: another site's entries get both verdicts", async () => {
    const db = store.db;
    const hostile = await siteRegistry(db).add({ name: "敌意站", url: "http://127.0.0.1:21997" });
    const honest = await siteRegistry(db).add({ name: "正常站", url: "http://127.0.0.1:21996" });
    for (const s of [hostile, honest]) {
      await db.ledgerSync.create({
        data: { siteId: s.id, siteUserId: 7003n, holder: "test", leaseUntil: new Date(END * 1000 + 3_600_000) },
      });
      const prices: ModelPrice[] = [
        { model: "gpt-4o-mini", inputPerMillionUsd: 0.15, outputPerMillionUsd: 0.6, perCallUsd: null, groups: null },
      ];
      await priceStore(db).recordSite(
        s.id,
        { prices, published: true, groupRatios: { default: 1, vip: 1e308 } },
        new Date((END - 10 * 86_400) * 1000),
      );
    }
    // A ratio of 1e308 (Infinity once multiplied), a cache of 1e300 tokens, a group the list rates at 1e308.
    const bad = [
      { model_ratio: 1e308, group_ratio: 1, completion_ratio: 4 },
      { model_ratio: 0.075, group_ratio: 1, completion_ratio: 4, cache_tokens: 1e300, cache_ratio: 0.1 },
      { group: "vip", model_ratio: 0.075, group_ratio: 1, completion_ratio: 4 },
    ].map((detail, j) => ({
      ...entries(1)[0]!,
      fingerprint: `bad${j}`,
      at: END - 600 + j,
      detail: JSON.stringify(detail),
    }));
    await ledgerStore(db).commit({ siteId: hostile.id, siteUserId: 7003 }, bad, "test", END);
    await ledgerStore(db).commit({ siteId: honest.id, siteUserId: 7003 }, entries(8), "test", END);
    const consume = await db.ledgerEntry.count({ where: { type: "consume" } });

    const { looked } = await passInRuns(true);
    expect(looked).toBe(consume);
    const bySite = await db.ledgerCheckHour.groupBy({
      by: ["siteId"],
      _sum: { entries: true, checked: true, listChecked: true },
      orderBy: { siteId: "asc" },
    });
    const honestConsume = entries(8).filter((e) => e.type === "consume");
    const listed = honestConsume.filter((e) => e.model === "gpt-4o-mini").length;
    expect(bySite.map((r) => [r.siteId, r._sum.entries, r._sum.checked, r._sum.listChecked])).toEqual([
      // The hostile site's three are counted; only the one whose own figures hold is judged, and not on the list.
      [hostile.id, 3, 1, 0],
      [honest.id, honestConsume.length, honestConsume.length, listed],
    ]);
  });
});
