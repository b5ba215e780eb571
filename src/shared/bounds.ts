/**
 * The ranges a figure a site sends must fall in to be taken as a value (docs/design.md 29): the
 * gateway's parsers read every quota, ratio, price, amount, period and count through these, and a
 * figure outside its range is unknown (null), never zero, never a number no sum or loop can hold.
 * Shared because the dashboard reads the same log texts (a top-up's amount) as the server.
 */

export const BOUNDS = {
  /**
   * Quota units of a balance, a key's limit, a plan's window or a top-up: 2e9 USD at the default
   * 500,000 a dollar (new-api's own largest key limit is 5e14).
   */
  quota: 1e15,
  /** Quota units of one log entry: 2e7 USD a request (an hour's sums hold 900,000 of them). */
  entryQuota: 1e13,
  /** Tokens of one entry. */
  tokens: 1e13,
  /** Any ratio or multiplier (model, completion, group, cache, an exchange rate's share): 0 to a million. */
  ratio: 1e6,
  /** A price or an amount in USD (or the site's money): a billion. */
  money: 1e9,
  /** Quota units per USD (`quota_per_unit`): from a hundredth to a trillion. */
  quotaPerUnit: { min: 0.01, max: 1e12 },
  /** Display currency per USD. */
  exchangeRate: { min: 1e-6, max: 1e6 },
  /** A recurring window (a plan's custom reset): from an hour to ten years. */
  periodSeconds: { min: 3600, max: 10 * 366 * 86_400 },
} as const;

/** A finite number from a number or a numeric string; null otherwise. */
function numberOf(v: unknown): number | null {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
}

/** `v` as a number in [min, max]; null when it is none or outside. */
export function within(v: unknown, min: number, max: number): number | null {
  const n = numberOf(v);
  return n !== null && n >= min && n <= max ? n : null;
}

/** A whole quota figure, negative ones included (a refund, a debt): null outside ±BOUNDS.quota. */
export const quotaOf = (v: unknown): number | null => {
  const n = within(v, -BOUNDS.quota, BOUNDS.quota);
  return n === null ? null : Math.trunc(n);
};

/** A ratio in [0, BOUNDS.ratio]; null otherwise. */
export const ratioOf = (v: unknown): number | null => within(v, 0, BOUNDS.ratio);

/** An amount of money in [0, BOUNDS.money]; null otherwise. */
export const moneyOf = (v: unknown): number | null => within(v, 0, BOUNDS.money);

/** Whether a computed quota figure can be held and summed: a whole number within ±BOUNDS.quota. */
export const saneQuota = (n: number): boolean => Number.isSafeInteger(n) && Math.abs(n) <= BOUNDS.quota;
/** Whether a figure of one entry (its charge, its cache figures) can be held in an hour's sums. */
export const saneEntryFigure = (n: number): boolean => Number.isSafeInteger(n) && Math.abs(n) <= BOUNDS.entryQuota;
