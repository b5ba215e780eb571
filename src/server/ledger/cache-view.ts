/**
 * The cache as 用量分析 reads it (docs/design.md 27): input tokens, cache reads and writes, the hit
 * rate and what the cache saved or cost, by day, model, token or account over a range, from the
 * verifying pass's hourly sums (ledger_check_hours), in USD at each account's site's units.
 */
import type { Db } from "../db/client";
import { addDays, dayIn, dayStart, nextDay } from "../core/time";
import { round6, usdOfQuota } from "../../shared/money";
import type { Reader } from "./analytics";
import { boundOf } from "./owner";
import { progressBehind } from "./check";
import { accountLabels, accountName } from "./check-view";
import type { UsageCache } from "./check-schemas";

export type CacheQuery = { from: string; to: string; tz: string; groupBy: UsageCache["groupBy"] };

type Acc = { inputTokens: number; cacheRead: number; cacheWrite: number; savedUsd: number; costUsd: number };
const zero = (): Acc => ({ inputTokens: 0, cacheRead: 0, cacheWrite: 0, savedUsd: 0, costUsd: 0 });
const done = (a: Acc) => ({
  inputTokens: a.inputTokens,
  cacheRead: a.cacheRead,
  cacheWrite: a.cacheWrite,
  hitRate: a.inputTokens > 0 ? Math.round((a.cacheRead / a.inputTokens) * 1e4) / 1e4 : null,
  savedUsd: round6(a.savedUsd),
  costUsd: round6(a.costUsd),
});

const COLUMN = { day: "hour", model: "model", token: "tokenName", account: null } as const;

export async function usageCache(db: Db, readers: Reader[], q: CacheQuery): Promise<UsageCache> {
  const from = dayStart(q.tz, q.from) / 1000;
  const to = dayStart(q.tz, nextDay(q.to)) / 1000;
  const keys = new Map<string, Acc>();
  if (q.groupBy === "day") for (let d = q.from; d <= q.to; d = addDays(d, 1)) keys.set(d, zero());
  const column = COLUMN[q.groupBy];
  const [rows, pending] = await Promise.all([
    readers.length === 0
      ? Promise.resolve([])
      : db.ledgerCheckHour.groupBy({
          by: column ? ["siteId", "siteUserId", column] : ["siteId", "siteUserId"],
          where: {
            OR: readers.map((r) => ({
              siteId: r.siteId,
              siteUserId: BigInt(r.siteUserId),
              hour: { gte: Math.floor(from / 3600) * 3600, lt: Math.min(to, boundOf(r)) },
            })),
          },
          _sum: { inputTokens: true, cacheRead: true, cacheWrite: true, cacheSaved: true, cacheCost: true },
        }),
    progressBehind(db),
  ]);
  const byOwner = new Map(readers.map((r) => [`${r.siteId}:${r.siteUserId}`, r]));
  // By account: each its own row, however many share a name (told apart by site).
  const labels = accountLabels(readers);
  const total = zero();
  for (const row of rows as Array<
    Record<string, unknown> & { siteId: number; siteUserId: bigint; _sum: Record<string, bigint | null> }
  >) {
    const r = byOwner.get(`${row.siteId}:${row.siteUserId}`);
    if (!r) continue;
    const key =
      q.groupBy === "day"
        ? dayIn(q.tz, Number(row.hour) * 1000)
        : q.groupBy === "account"
          ? (labels.get(`${row.siteId}:${row.siteUserId}`) ?? accountName(r))
          : String(row[column as string]);
    // A zone off the whole hour puts the range's first hour partly on the day before: left out.
    if (q.groupBy === "day" && !keys.has(key)) continue;
    const n = (k: string) => Number(row._sum[k] ?? 0);
    const add: Acc = {
      inputTokens: n("inputTokens"),
      cacheRead: n("cacheRead"),
      cacheWrite: n("cacheWrite"),
      savedUsd: usdOfQuota(n("cacheSaved"), r.quotaPerUnit),
      costUsd: usdOfQuota(n("cacheCost"), r.quotaPerUnit),
    };
    for (const acc of [keys.get(key) ?? keys.set(key, zero()).get(key)!, total]) {
      acc.inputTokens += add.inputTokens;
      acc.cacheRead += add.cacheRead;
      acc.cacheWrite += add.cacheWrite;
      acc.savedUsd += add.savedUsd;
      acc.costUsd += add.costUsd;
    }
  }
  const out = [...keys].map(([key, acc]) => ({ key, ...done(acc) }));
  if (q.groupBy !== "day") out.sort((a, b) => b.cacheRead - a.cacheRead || b.inputTokens - a.inputTokens);
  else out.sort((a, b) => (a.key < b.key ? -1 : 1));
  return { from: q.from, to: q.to, tz: q.tz, groupBy: q.groupBy, rows: out, totals: done(total), pending };
}
