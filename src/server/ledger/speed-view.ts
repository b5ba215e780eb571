/**
 * How fast each site answers each model (docs/design.md 27): over a range, per site and model, the
 * median and 90th percentile of the calls' total time and first-token time, read from the
 * verifying pass's counts per hour and bucket (ledger_speed), the accounts of one site together.
 */
import type { Db } from "../db/client";
import { dayStart, nextDay } from "../core/time";
import { SPEED_BOUNDS, quantileMs } from "../gateway/speed";
import type { Reader } from "./analytics";
import { boundOf } from "./owner";
import type { UsageSpeed } from "./check-schemas";

export async function usageSpeed(
  db: Db,
  readers: Reader[],
  q: { from: string; to: string; tz: string },
): Promise<UsageSpeed> {
  const from = dayStart(q.tz, q.from) / 1000;
  const to = dayStart(q.tz, nextDay(q.to)) / 1000;
  const empty: UsageSpeed = { from: q.from, to: q.to, tz: q.tz, rows: [] };
  if (readers.length === 0) return empty;
  const where = {
    OR: readers.map((r) => ({
      siteId: r.siteId,
      siteUserId: BigInt(r.siteUserId),
      hour: { gte: Math.floor(from / 3600) * 3600, lt: Math.min(to, boundOf(r)) },
    })),
  };
  const [counts, entries] = await Promise.all([
    db.ledgerSpeed.groupBy({ by: ["siteId", "siteUserId", "model", "kind", "bucket"], where, _sum: { count: true } }),
    // Every consume call the verifying pass took, timed or not: the 请求 a row counts.
    db.ledgerCheckHour.groupBy({ by: ["siteId", "siteUserId", "model"], where, _sum: { entries: true } }),
  ]);
  const calls = new Map<string, number>();
  for (const e of entries) {
    const key = JSON.stringify([e.siteId, e.model]);
    calls.set(key, (calls.get(key) ?? 0) + (e._sum.entries ?? 0));
  }
  const byOwner = new Map(readers.map((r) => [`${r.siteId}:${r.siteUserId}`, r]));
  const cells = new Map<
    string,
    { site: { id: number; name: string }; model: string; calls: number; total: number[]; first: number[] }
  >();
  for (const c of counts) {
    const r = byOwner.get(`${c.siteId}:${c.siteUserId}`);
    if (!r) continue;
    const key = JSON.stringify([c.siteId, c.model]);
    const cell = cells.get(key) ?? {
      site: { id: c.siteId, name: r.site?.name ?? "已移除的站点" },
      model: c.model,
      calls: calls.get(key) ?? 0,
      total: Array<number>(SPEED_BOUNDS.length + 1).fill(0),
      first: Array<number>(SPEED_BOUNDS.length + 1).fill(0),
    };
    cells.set(key, cell);
    const list = c.kind === "first" ? cell.first : cell.total;
    list[c.bucket] = (list[c.bucket] ?? 0) + (c._sum.count ?? 0);
  }
  const sum = (xs: number[]) => xs.reduce((s, n) => s + n, 0);
  const rows = [...cells.values()].map((c) => ({
    site: c.site,
    model: c.model,
    // Every call, and among them those the log timed (a call under a second of new-api's whole
    // seconds has no total time); never fewer calls than timed ones.
    requests: Math.max(c.calls, sum(c.total), sum(c.first)),
    timedRequests: sum(c.total),
    totalP50Ms: quantileMs(c.total, 0.5),
    totalP90Ms: quantileMs(c.total, 0.9),
    firstTokenRequests: sum(c.first),
    firstTokenP50Ms: quantileMs(c.first, 0.5),
    firstTokenP90Ms: quantileMs(c.first, 0.9),
    fastest: false,
  }));
  const order = (x: number | null) => x ?? Infinity;
  rows.sort((a, b) => a.model.localeCompare(b.model) || order(a.totalP50Ms) - order(b.totalP50Ms));
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!;
    const sites = rows.filter((r) => r.model === row.model && r.totalP50Ms !== null);
    row.fastest = sites.length > 1 && sites[0] === row;
  }
  return { ...empty, rows };
}
