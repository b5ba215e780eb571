/** The chart series of 用量分析, built from the ledger's answers: pure functions of the data. */
import { round6 } from "../shared/money";

/** Models past this many are summed as 其他 in the daily chart. */
export const TOP_MODELS = 8;

type DayRow = {
  key: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  split?: Record<string, number>;
};

/**
 * One point per day (or hour): requests and tokens, and the spend of each of the top models (the
 * rest summed as 其他); `stacked` names the bars in order. A period after `now` (`2026-11-27 11:43`
 * in the range's zone) has not come yet: its point carries only its label, so nothing is drawn
 * there, not a zero.
 */
export function dailySeries(days: DayRow[], topModels: string[], now = "9999") {
  const top = topModels.slice(0, TOP_MODELS);
  const points = days.map((r) => {
    // A day or week by its month and day, a month as it is (`2026-11`).
    const day = r.key.length === 7 ? r.key : r.key.slice(5);
    if (r.key > now) return { day };
    const point: Record<string, number | string> = {
      day,
      requests: r.requests,
      promptTokens: r.promptTokens,
      completionTokens: r.completionTokens,
    };
    let rest = 0;
    for (const [model, spent] of Object.entries(r.split ?? {})) {
      if (top.includes(model)) point[model] = spent;
      else rest += spent;
    }
    if (rest > 0) point["其他"] = round6(rest);
    return point;
  });
  const stacked = [...top, ...(points.some((p) => "其他" in p) ? ["其他"] : [])];
  return { points, stacked };
}

/**
 * One point per day with a balance, each account's as `a<index>`, oldest first; a day whose
 * balance moved otherwise than the log says (对账) carries the difference as `u<index>`.
 */
export function balanceSeries(
  accounts: Array<{ series: Array<{ day: string; usd: number; unmatchedUsd?: number | null }> }>,
) {
  const byDay = new Map<string, Record<string, number | string>>();
  for (const [i, a] of accounts.entries()) {
    for (const p of a.series) {
      const point = byDay.get(p.day) ?? { day: p.day.slice(5) };
      point[`a${i}`] = p.usd;
      if (p.unmatchedUsd !== null && p.unmatchedUsd !== undefined) point[`u${i}`] = p.unmatchedUsd;
      byDay.set(p.day, point);
    }
  }
  return [...byDay.entries()].sort(([x], [y]) => (x < y ? -1 : 1)).map(([, p]) => p);
}

/**
 * The ticks of a count axis in one unit, the one its largest value needs (`0 · 5万 · 10万 · 15万`),
 * never `90,000` beside `18万`.
 */
export function countAxis(max: number): (v: number) => string {
  const unit = max >= 1e8 ? { size: 1e8, sign: "亿" } : max >= 100_000 ? { size: 1e4, sign: "万" } : null;
  return (v) =>
    unit && v !== 0
      ? `${(v / unit.size).toLocaleString("en-US", { maximumFractionDigits: 2 })}${unit.sign}`
      : v.toLocaleString("en-US");
}

/** A range's days summed by week (keyed by its Monday) or by month (keyed `YYYY-MM`), in order. */
export function byPeriod<T extends DayRow & { usd: number }>(
  days: T[],
  period: "day" | "week" | "month",
): Array<DayRow & { usd: number }> {
  if (period === "day") return days;
  const out = new Map<string, DayRow & { usd: number }>();
  for (const d of days) {
    const date = new Date(`${d.key}T00:00:00Z`);
    const key =
      period === "month"
        ? d.key.slice(0, 7)
        : new Date(date.getTime() - ((date.getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10);
    const row = out.get(key) ?? { key, requests: 0, promptTokens: 0, completionTokens: 0, usd: 0, split: {} };
    row.requests += d.requests;
    row.promptTokens += d.promptTokens;
    row.completionTokens += d.completionTokens;
    row.usd = round6(row.usd + d.usd);
    for (const [model, spent] of Object.entries(d.split ?? {})) {
      row.split![model] = round6((row.split![model] ?? 0) + spent);
    }
    out.set(key, row);
  }
  return [...out.values()];
}
