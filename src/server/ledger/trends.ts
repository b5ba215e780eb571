/**
 * 全部账户's trends (docs/design.md 27): each account's balance at the end of every day of the range
 * (its last snapshot by then, in USD) and what came in today, with the totals: a sparkline per row
 * and a total line, read from the snapshots (one bounded read per day) and the income of the day.
 */
import { z } from "zod";
import type { Db } from "../db/client";
import { dayStarts } from "../core/time";
import { round6, usdOfQuota } from "../../shared/money";
import type { Reader } from "./analytics";
import { accountName } from "./check-view";
import { usageIncome, type CheckinSource } from "./income";
import { ledgerStore } from "./store";
import { ownerKey } from "./owner";

/** The longest range of a trend: a snapshot read per day. */
export const TRENDS_MAX_DAYS = 92;

export const usageTrendsSchema = z
  .object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    days: z.array(z.string()).describe("范围内每一天（tz 时区）"),
    accounts: z.array(
      z.object({
        siteId: z.number().int(),
        userId: z.number().int(),
        site: z.string(),
        account: z.string(),
        balancesUsd: z
          .array(z.number().nullable())
          .describe(
            "每天结束时（或今天到此刻）最近一次同步记下的余额（美元），与 days 一一对应；那时还没有记录时为 null",
          ),
        incomeTodayUsd: z.number().describe("范围最后一天（通常是今天）的收入：充值、兑换码、签到等奖励、退款（美元）"),
      }),
    ),
    totals: z.object({
      balancesUsd: z
        .array(z.number().nullable())
        .describe("各账户每天余额之和（有记录的账户）；那天还没有任何账户有记录时为 null"),
      incomeTodayUsd: z.number(),
    }),
  })
  .meta({ id: "UsageTrends" });
export type UsageTrends = z.infer<typeof usageTrendsSchema>;

export async function usageTrends(
  db: Db,
  readers: Reader[],
  q: { from: string; to: string; tz: string },
  checkins: CheckinSource,
  now = Date.now(),
): Promise<UsageTrends> {
  const starts = dayStarts(q.tz, q.from, q.to);
  const days = starts.slice(0, -1).map((d) => d.day);
  const store = ledgerStore(db);
  // The end of each day (its last second), or now for today.
  const ends = starts.slice(1).map((d) => Math.min(Math.floor(d.start / 1000) - 1, Math.floor(now / 1000)));
  const [snapshots, income] = await Promise.all([
    Promise.all(ends.map((end) => (readers.length === 0 ? Promise.resolve([]) : store.lastSnapshots(readers, end)))),
    usageIncome(db, readers, { from: q.to, to: q.to, tz: q.tz }, checkins),
  ]);
  const byDay = snapshots.map((list) => new Map(list.map((s) => [ownerKey(s), s.quota])));
  const incomeOf = new Map(income.accounts.map((a) => [`${a.siteId}:${a.userId}`, a.incomeUsd]));
  const accounts = readers.map((r) => ({
    siteId: r.siteId,
    userId: r.siteUserId,
    site: r.site?.name ?? "已移除的站点",
    account: accountName(r),
    balancesUsd: byDay.map((m) => {
      const quota = m.get(ownerKey(r));
      return quota === undefined ? null : round6(usdOfQuota(quota, r.quotaPerUnit));
    }),
    incomeTodayUsd: incomeOf.get(ownerKey(r)) ?? 0,
  }));
  return {
    from: q.from,
    to: q.to,
    tz: q.tz,
    days,
    accounts,
    totals: {
      balancesUsd: days.map((_, i) =>
        accounts.some((a) => a.balancesUsd[i] !== null)
          ? round6(accounts.reduce((s, a) => s + (a.balancesUsd[i] ?? 0), 0))
          : null,
      ),
      incomeTodayUsd: round6(accounts.reduce((s, a) => s + a.incomeTodayUsd, 0)),
    },
  };
}
