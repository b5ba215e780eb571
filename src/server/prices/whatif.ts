/**
 * 如果在别处 (docs/design.md 22): a range's usage per model, all the accounts together, priced on every
 * account that offers the model at what that account is actually charged, each part of the range
 * at the list price of its time.
 */
import { addDays, dayIn } from "../core/time";
import type { Db } from "../db/client";
import { summaryOf } from "../ledger/analytics";
import { accountPrice, costElsewhere, effectiveOf, usableBy } from "./account-price";
import { pricesOf, type PricedAccount } from "./compare";
import { figuresOf, priceStore, type PriceFigures } from "./store";
import { round6 } from "../../shared/money";

export type WhatIfRow = {
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  actualUsd: number;
  elsewhere: Array<{ siteId: number; siteName: string; accountId: string; usd: number; derivedFromLogs: boolean }>;
};

type Use = { requests: number; promptTokens: number; completionTokens: number };

/**
 * The range cut where a list price of a used model changed: each part with the list each site
 * had at its end (a change counts from the local day it was read on). One part, with no list,
 * when nothing changed in the range: the current prices then.
 */
async function partsOf(
  db: Db,
  siteIds: number[],
  models: string[],
  q: { from: string; to: string; tz: string },
): Promise<Array<{ from: string; to: string; list: ((siteId: number, model: string) => PriceFigures | null) | null }>> {
  const rows = await priceStore(db).histories(siteIds, models);
  const bySiteModel = new Map<string, Array<{ day: string } & PriceFigures>>();
  for (const r of rows) {
    const key = `${r.siteId}\n${r.model}`;
    bySiteModel.set(key, [...(bySiteModel.get(key) ?? []), { day: dayIn(q.tz, r.at.getTime()), ...r }]);
  }
  /** The list price as it stood at the end of `day` (the earliest known before it was first read). */
  const at = (key: string, day: string): PriceFigures | null => {
    const list = bySiteModel.get(key) ?? [];
    // Not listed then (a row of nulls): priced at today's list like a model never read.
    return figuresOf(list.filter((r) => r.day <= day).pop() ?? list[0]);
  };
  const same = (a: PriceFigures | null, b: PriceFigures | null) =>
    a?.inputPerM === b?.inputPerM && a?.outputPerM === b?.outputPerM && a?.perCall === b?.perCall;
  // The days inside the range on which some used model's price moved.
  const days = [...new Set(rows.map((r) => dayIn(q.tz, r.at.getTime())))]
    .filter((d) => d > q.from && d <= q.to)
    .sort()
    .filter((d) => [...bySiteModel.keys()].some((key) => !same(at(key, addDays(d, -1)), at(key, d))));
  if (days.length === 0) return [{ from: q.from, to: q.to, list: null }];
  const starts = [q.from, ...days];
  return starts.map((from, i) => {
    const to = i + 1 < starts.length ? addDays(starts[i + 1] as string, -1) : q.to;
    return { from, to, list: (siteId: number, model: string) => at(`${siteId}\n${model}`, to) };
  });
}

/**
 * 如果在别处: the range's usage per model (all the accounts together), what it cost, and what it
 * would have cost on each account that offers the model at what that account is actually charged
 * (its list at its group times 核对's factor on its own entries: compare.ts effectiveOf), the
 * cache and the rest of each real cost carried along; where a site's list price changed within
 * the range, each part of it is priced at the list of its time.
 */
export async function whatIf(
  db: Db,
  accounts: PricedAccount[],
  q: { from: string; to: string; tz: string },
): Promise<{ rows: WhatIfRow[]; totals: { actualUsd: number; cheapestUsd: number; savingUsd: number } }> {
  const p = await pricesOf(db, accounts);
  const readers = accounts.map((a) => a.reader);
  const used = await summaryOf(db, readers, { ...q, groupBy: "model" });
  const models = used.rows.map((u) => u.key).filter((k): k is string => Boolean(k));
  const parts = await partsOf(db, [...new Set(readers.map((r) => r.siteId))], models, q);
  const byModel = (rows: typeof used.rows) => new Map(rows.map((r) => [r.key, r]));
  // Each account's own usage and what it paid, part by part: moved elsewhere at the prices' ratio.
  const usage = await Promise.all(
    parts.map(async (part) => ({
      part,
      byReader: await Promise.all(
        readers.map(async (r) =>
          byModel((await summaryOf(db, [r], { from: part.from, to: part.to, tz: q.tz, groupBy: "model" })).rows),
        ),
      ),
    })),
  );
  /** An account's effective price of a model in a part of the range (the list of its time); null: none. */
  const priceIn = (a: PricedAccount, model: string, list: (typeof parts)[number]["list"]) => {
    const published = p.published(a, model);
    const side = p.side(a);
    const current = accountPrice(published, side, model);
    if (!current) return null;
    const then = list?.(a.reader.siteId, model) ?? null;
    const listed =
      then && published
        ? {
            ...published,
            inputPerMillionUsd: then.inputPerM,
            outputPerMillionUsd: then.outputPerM,
            perCallUsd: then.perCall,
          }
        : published;
    const price = (then ? accountPrice(listed, side, model) : null) ?? current;
    return effectiveOf(price, p.charged(a, model));
  };
  /**
   * What a model's usage would have cost on an account, part by part and account by account: each
   * account's real cost at the ratio of the two effective prices (compare.ts costElsewhere); null
   * where it cannot be priced.
   */
  const costOn = (a: PricedAccount, model: string) => {
    const published = p.published(a, model);
    const side = p.side(a);
    const current = accountPrice(published, side, model);
    if (!current || !usableBy(published, side, model, true)) return null;
    let usd = 0;
    for (const { part, byReader } of usage) {
      for (const [i, rows] of byReader.entries()) {
        const use: (Use & { usd: number }) | undefined = rows.get(model);
        if (!use) continue;
        const there = priceIn(a, model, part.list);
        if (!there) return null;
        const cost = costElsewhere(use.usd, use, priceIn(accounts[i] as PricedAccount, model, part.list), there);
        if (cost === null) return null;
        usd += cost;
      }
    }
    return { usd, derivedFromLogs: current.derivedFromLogs };
  };
  const rows: WhatIfRow[] = [];
  let actualUsd = 0;
  let cheapestUsd = 0;
  for (const u of used.rows) {
    if (!u.key) continue;
    const elsewhere: WhatIfRow["elsewhere"] = [];
    for (const a of accounts) {
      const cost = costOn(a, u.key);
      if (!cost) continue;
      elsewhere.push({
        siteId: a.reader.siteId,
        siteName: a.reader.site?.name ?? "已移除的站点",
        accountId: a.reader.key,
        usd: round6(cost.usd),
        derivedFromLogs: cost.derivedFromLogs,
      });
    }
    elsewhere.sort((x, y) => x.usd - y.usd);
    actualUsd += u.usd;
    cheapestUsd += Math.min(u.usd, elsewhere[0]?.usd ?? Infinity);
    rows.push({
      model: u.key,
      requests: u.requests,
      promptTokens: u.promptTokens,
      completionTokens: u.completionTokens,
      actualUsd: u.usd,
      elsewhere,
    });
  }
  return {
    rows,
    totals: {
      actualUsd: round6(actualUsd),
      cheapestUsd: round6(cheapestUsd),
      savingUsd: round6(actualUsd - cheapestUsd),
    },
  };
}
