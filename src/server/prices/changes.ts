/**
 * What a site's price change means to the accounts that use the model (docs/design.md 22): the models
 * an account called in the last 7 days whose price on its site rose, or that left the site's list,
 * in the last day. The alerts' price_changed rule reads it.
 */
import { formatUsd } from "../../shared/money";
import type { Db } from "../db/client";
import { modelsUsedSince } from "../ledger/price-facts";
import { priceStore, type PriceFigures, type PriceMove } from "./store";

/** A change is told for this long after it was read. */
const CHANGE_WINDOW_MS = 24 * 3_600_000;
/** The models an account called in this many days are the ones whose changes it is told. */
const USED_DAYS = 7;

/** A model's change as a rule reads it: its rise in percent, or null when it left the list. */
export type ModelRise = { model: string; risePct: number | null; text: string };

const FIGURES: Array<{ key: keyof PriceFigures; label: string; unit: string }> = [
  { key: "inputPerM", label: "输入", unit: "/1M" },
  { key: "outputPerM", label: "输出", unit: "/1M" },
  { key: "perCall", label: "按次", unit: "/次" },
];

/**
 * A change's largest rise over its figures, with the words for it; null for a model newly listed
 * or one that only got cheaper. A model gone from the list, or billed another way now (per call
 * instead of per token), counts as a rise of unknown size.
 */
export function riseOf(move: PriceMove): ModelRise | null {
  const { before, after, model } = move;
  if (!before) return null;
  if (!after) return { model, risePct: null, text: `${model} 已从价格表下架` };
  let best: { pct: number; text: string } | null = null;
  let comparable = false;
  for (const f of FIGURES) {
    const was = before[f.key];
    const is = after[f.key];
    if (was === null || is === null) continue;
    comparable = true;
    if (was <= 0) {
      if (is > 0 && !best) best = { pct: Infinity, text: `${f.label}由免费变为 ${formatUsd(is)}${f.unit}` };
      continue;
    }
    const pct = ((is - was) / was) * 100;
    if (pct > 0 && (!best || pct > best.pct)) {
      best = { pct, text: `${f.label} ${formatUsd(was)} → ${formatUsd(is)}${f.unit}` };
    }
  }
  if (!comparable) return { model, risePct: null, text: `${model} 的计价方式已改变` };
  if (!best) return null;
  return Number.isFinite(best.pct)
    ? { model, risePct: Math.round(best.pct * 10) / 10, text: `${model} 涨价 ${best.pct.toFixed(1)}%（${best.text}）` }
    : { model, risePct: null, text: `${model} ${best.text}` };
}

/**
 * For each account ("siteId:siteUserId"), the rises in the last day of the models it called in
 * the last 7 days on its site, the largest first (a model gone or re-billed before any figure).
 * Two reads when no price changed (the usual case), three when one did.
 */
export async function modelRises(
  db: Db,
  owners: Array<{ siteId: number; siteUserId: number }>,
  now = new Date(),
): Promise<Map<string, ModelRise[]>> {
  const out = new Map<string, ModelRise[]>();
  const siteIds = [...new Set(owners.map((o) => o.siteId))];
  const moves = await priceStore(db).changedSince(siteIds, new Date(now.getTime() - CHANGE_WINDOW_MS));
  const rises = new Map<number, ModelRise[]>();
  for (const m of moves) {
    const rise = riseOf(m);
    if (rise) rises.set(m.siteId, [...(rises.get(m.siteId) ?? []), rise]);
  }
  if (rises.size === 0) return out;
  const affected = owners.filter((o) => rises.has(o.siteId));
  const models = [...new Set([...rises.values()].flat().map((r) => r.model))];
  const used = await modelsUsedSince(db, affected, models, now.getTime() / 1000 - USED_DAYS * 86_400);
  for (const o of affected) {
    const key = `${o.siteId}:${o.siteUserId}`;
    const mine = used.get(key);
    if (!mine) continue;
    const list = (rises.get(o.siteId) ?? []).filter((r) => mine.has(r.model));
    const rank = (r: ModelRise) => r.risePct ?? Infinity;
    list.sort((x, y) => (rank(x) === rank(y) ? 0 : rank(y) > rank(x) ? 1 : -1));
    if (list.length > 0) out.set(key, list);
  }
  return out;
}
