/**
 * How long a call took, as its log says (docs/design.md 27): in all (new-api's `use_time` in
 * seconds, one-api's `elapsed_time` and one-hub's `request_time` in ms: the entry's duration) and
 * to its first token (new-api's `frt`, a float of ms, −1000 when none was recorded; one-hub's and
 * done-hub's `first_response`, ms, only when > 0). Kept as counts per bucket of time, from which a
 * percentile over any range is read, interpolated inside its bucket.
 */
import type { CheckedEntry } from "./charge-check";

/** The buckets' upper bounds in ms; the last bucket is everything above the last bound. */
export const SPEED_BOUNDS = [
  100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 4000, 5000, 7500, 10_000, 15_000, 20_000, 30_000, 45_000, 60_000,
  120_000, 300_000,
];

export const bucketOf = (ms: number): number => {
  for (let i = 0; i < SPEED_BOUNDS.length; i++) if (ms <= (SPEED_BOUNDS[i] as number)) return i;
  return SPEED_BOUNDS.length;
};

/** The entry's first-token time in ms, where its log gives one. */
export function firstTokenMs(detail: CheckedEntry["detail"]): number | null {
  for (const key of ["frt", "first_response"]) {
    const v = detail[key];
    const n = typeof v === "number" ? v : typeof v === "string" ? Number(v) : NaN;
    if (Number.isFinite(n) && n > 0) return n;
  }
  return null;
}

/**
 * The `p` quantile (0–1) of the counts per bucket, in ms: linear inside the bucket it falls in
 * (the first from 0, the last taken at its lower bound); null without counts.
 */
export function quantileMs(counts: number[], p: number): number | null {
  const total = counts.reduce((s, n) => s + n, 0);
  if (total === 0) return null;
  const rank = p * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] ?? 0;
    if (n > 0 && seen + n >= rank) {
      const low = i === 0 ? 0 : (SPEED_BOUNDS[i - 1] as number);
      if (i >= SPEED_BOUNDS.length) return low;
      const high = SPEED_BOUNDS[i] as number;
      return Math.round(low + ((rank - seen) / n) * (high - low));
    }
    seen += n;
  }
  return SPEED_BOUNDS[SPEED_BOUNDS.length - 1] as number;
}
