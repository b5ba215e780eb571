/**
 * Exact decimals, as new-api's shopspring/decimal computes a charge: each number taken as the
 * decimal its shortest form spells (what a site's JSON said, and what decimal.NewFromFloat reads),
 * sums and products exact, one rounding at the end.
 */
export type Dec = { n: bigint; s: number };

/** A number as the decimal its shortest form spells (what the site's JSON said). */
export function dec(x: number): Dec {
  // Token counts are whole numbers; ratios repeat (a model's, a group's): both without the text.
  if (Number.isSafeInteger(x)) return { n: BigInt(x), s: 0 };
  const seen = SEEN.get(x);
  if (seen) return seen;
  const d = parsed(x);
  if (SEEN.size >= SEEN_KEPT) SEEN.clear();
  SEEN.set(x, d);
  return d;
}

const SEEN = new Map<number, Dec>();
const SEEN_KEPT = 4096;

function parsed(x: number): Dec {
  const [mantissa = "0", exp = "0"] = x.toString().toLowerCase().split("e");
  const negative = mantissa.startsWith("-");
  const [whole = "0", frac = ""] = mantissa.replace("-", "").split(".");
  let n = BigInt(whole + frac) * (negative ? -1n : 1n);
  let s = frac.length - Number(exp);
  if (s < 0) {
    n *= 10n ** BigInt(-s);
    s = 0;
  }
  return { n, s };
}
const scaled = (a: Dec, s: number): bigint => a.n * 10n ** BigInt(s - a.s);
export const add = (a: Dec, b: Dec): Dec => {
  const s = Math.max(a.s, b.s);
  return { n: scaled(a, s) + scaled(b, s), s };
};
export const sub = (a: Dec, b: Dec): Dec => add(a, { n: -b.n, s: b.s });
export const mul = (a: Dec, b: Dec): Dec => ({ n: a.n * b.n, s: a.s + b.s });
export const sign = (a: Dec) => (a.n > 0n ? 1 : a.n < 0n ? -1 : 0);
export const max0 = (a: Dec): Dec => (a.n < 0n ? { n: 0n, s: 0 } : a);
/** Rounded to a whole number, halves away from zero. */
export function roundHalfAway(a: Dec): number {
  const unit = 10n ** BigInt(a.s);
  const abs = a.n < 0n ? -a.n : a.n;
  const q = (abs * 2n + unit) / (unit * 2n);
  return Number(a.n < 0n ? -q : q);
}
