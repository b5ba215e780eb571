/**
 * What a model costs on an account (docs/design.md 22, docs/figures.md): its list price at its
 * group (or the log's fit), what it is actually charged (核对's factor on its own entries), whether
 * it may use the model, and what usage would cost at another price.
 */
import { priced } from "../gateway/prices";
import type { ChargedOverList } from "../ledger/price-facts";
import type { AccountSide, StoredPrice } from "./store";
import { round6 } from "../../shared/money";

/** A price: USD per 1M input and output tokens, or per call. */
type Figures = { inputPerMillionUsd: number | null; outputPerMillionUsd: number | null; perCallUsd: number | null };

/** A price as charged, and what it rests on: 核对 of the account's own entries, the list alone, or the log's fit. */
export type Effective = {
  inputPerMillionUsd: number | null;
  outputPerMillionUsd: number | null;
  perCallUsd: number | null;
  basis: "charged" | "list" | "logs";
};

/** A factor this close to 1 is the list's price (rounding of the entries' charges). */
export const OVER_LIST = 1.005;
/**
 * What the account is actually charged for a model at `price` (its list at its group, or the
 * log's fit): the list times 核对's factor on its own entries, where it has entries checked
 * against the list (docs/figures.md); the list alone, or the fit, otherwise.
 */
export function effectiveOf(price: Figures & { derivedFromLogs: boolean }, charged: ChargedOverList | null): Effective {
  if (price.derivedFromLogs) return { ...pick(price), basis: "logs" };
  if (!charged) return { ...pick(price), basis: "list" };
  const times = (x: number | null) => (x === null ? null : round6(x * charged.factor));
  return {
    inputPerMillionUsd: times(price.inputPerMillionUsd),
    outputPerMillionUsd: times(price.outputPerMillionUsd),
    perCallUsd: times(price.perCallUsd),
    basis: "charged",
  };
}

const pick = (p: Figures) => ({
  inputPerMillionUsd: p.inputPerMillionUsd,
  outputPerMillionUsd: p.outputPerMillionUsd,
  perCallUsd: p.perCallUsd,
});

/**
 * The account's price of a model: the published one times its group's ratio; where the ratio is
 * unknown or the site publishes none, the one fitted from its log; null when neither.
 */
export function accountPrice(published: StoredPrice | null, side: AccountSide | null, model: string) {
  const fitted = side?.derived.find((d) => d.model === model) ?? null;
  if (published && side?.groupRatio !== null && side?.groupRatio !== undefined) {
    return { ...priced(published, side.groupRatio), derivedFromLogs: false };
  }
  if (fitted) {
    return {
      inputPerMillionUsd: fitted.inputPerMillionUsd,
      outputPerMillionUsd: fitted.outputPerMillionUsd,
      perCallUsd: fitted.perCallUsd,
      derivedFromLogs: true,
    };
  }
  if (published) return { ...priced(published, 1), derivedFromLogs: false };
  return null;
}

/** Whether the account may use the model: its usable list, else the groups the site enables the model in. */
export function usableBy(
  published: StoredPrice | null,
  side: AccountSide | null,
  model: string,
  priced: boolean,
): boolean {
  if (side && side.models.length > 0) return side.models.includes(model);
  if (published?.groups && side?.group) return published.groups.includes(side.group);
  return priced;
}

/** What a call mix costs at a price: tokens per 1M, or calls at the per-call price. */
function costOf(p: Figures, use: { requests: number; promptTokens: number; completionTokens: number }): number | null {
  if (p.perCallUsd !== null) return use.requests * p.perCallUsd;
  if (p.inputPerMillionUsd === null) return null;
  const output = p.outputPerMillionUsd ?? p.inputPerMillionUsd;
  return (use.promptTokens * p.inputPerMillionUsd + use.completionTokens * output) / 1e6;
}

/**
 * What usage that cost `actualUsd` at the effective price `from` would cost at `to`: the real
 * cost scaled by what the two prices make of the usage, so that the cache, the group and 核对's
 * factor the real cost carries come along (at the same price: the real cost itself); at `to`
 * alone where `from` prices none of it.
 */
export function costElsewhere(
  actualUsd: number,
  use: { requests: number; promptTokens: number; completionTokens: number },
  from: Effective | null,
  to: Effective,
): number | null {
  const there = costOf(to, use);
  if (there === null) return null;
  const here = from ? costOf(from, use) : null;
  if (here === null || !(here > 0)) return there;
  return (actualUsd * there) / here;
}

/** The price to rank by: a call, or a million input and a million output tokens. */
export const rankOf = (r: Figures) =>
  r.perCallUsd ??
  (r.inputPerMillionUsd === null ? null : r.inputPerMillionUsd + (r.outputPerMillionUsd ?? r.inputPerMillionUsd));
