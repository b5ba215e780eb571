/**
 * What the alerts read of many accounts (docs/design.md 21), from the hourly totals and the balance
 * snapshots: a few queries per 200 accounts whatever the ledger's size.
 */
import { TZDate } from "@date-fns/tz";
import type { Db } from "../db/client";
import { addDays, dayIn, dayStart, offsetAt } from "../core/time";
import { round6 } from "../../shared/money";
import { ledgerStore, type Owner } from "./store";

/** What the alerts read of an account (USD): see watchFigures. */
export type WatchFigures = {
  balanceUsd: number | null;
  /** The balance in quota units (null before any sync), and the pace 预计可用天数 is read at (quota a day). */
  balanceQuota: number | null;
  paceQuota: number;
  todayUsd: number;
  sameHourUsd: number[];
};

/** Accounts read per query (two values each in its OR). */
const WATCHED_PER_QUERY = 200;

/**
 * What the alerts read of many accounts at once, keyed "siteId:siteUserId": the balance each one's
 * last sync noted (null before any), the consumption of today in `tz` and the pace of the last
 * 7 × 24 hours (预计可用天数, ledger/days-left.ts), and the spend of each of the 7 days before today up to this hour of the day
 * (the baseline of a spend spike). Read from the hourly totals, a few queries per 200 accounts;
 * in a zone whose midnight is not on the hour, an hour is counted in the day it starts in.
 */
export async function watchFigures(
  db: Db,
  owners: Array<Owner & { quotaPerUnit: number }>,
  tz: string,
  now: Date,
): Promise<Map<string, WatchFigures>> {
  const out = new Map<string, WatchFigures>();
  const today = dayIn(tz, now.getTime());
  // The local hour now; each of the 8 days' whole hours, and its hours up to and with this one.
  const hourNow = Number(new Date(now.getTime() + offsetAt(tz, now.getTime())).toISOString().slice(11, 13));
  const days = Array.from({ length: 8 }, (_, i) => addDays(today, i - 7)).map((day) => {
    const [y, m, d] = day.split("-").map(Number) as [number, number, number];
    const hour = (ms: number) => Math.ceil(ms / 1000 / 3600) * 3600;
    return {
      start: hour(dayStart(tz, day)),
      end: hour(dayStart(tz, addDays(day, 1))),
      cutoff: hour(new TZDate(y, m - 1, d, hourNow + 1, 0, tz).getTime()),
    };
  });
  const store = ledgerStore(db);
  for (let i = 0; i < owners.length; i += WATCHED_PER_QUERY) {
    const batch = owners.slice(i, i + WATCHED_PER_QUERY);
    const [sums, balances] = await Promise.all([
      store.ownerDays(batch, days),
      store.lastSnapshots(batch, 2_147_483_647),
    ]);
    const balanceOf = new Map(balances.map((b) => [`${b.siteId}:${b.siteUserId}`, b.quota]));
    const byOwner = new Map<string, Map<number, { all: number; early: number }>>();
    for (const s of sums) {
      const key = `${s.siteId}:${s.siteUserId}`;
      const list = byOwner.get(key) ?? new Map<number, { all: number; early: number }>();
      list.set(s.d, { all: s.quota, early: s.early });
      byOwner.set(key, list);
    }
    for (const o of batch) {
      const key = `${o.siteId}:${o.siteUserId}`;
      const list = byOwner.get(key);
      const usd = (quota: number) => round6(quota / o.quotaPerUnit);
      // Index 7 is today, 6 yesterday, … 0 a week ago.
      const all = (d: number) => list?.get(d)?.all ?? 0;
      const balance = balanceOf.get(key);
      out.set(key, {
        balanceUsd: balance === undefined ? null : usd(balance),
        balanceQuota: balance ?? null,
        // The last 7 × 24 hours to the end of this one (analytics.ts weekPace): the days before
        // today whole, today so far, and of the day a week ago the hours after this one's.
        paceQuota: ([1, 2, 3, 4, 5, 6, 7].reduce((s, d) => s + all(d), 0) + all(0) - (list?.get(0)?.early ?? 0)) / 7,
        todayUsd: usd(all(7)),
        sameHourUsd: [6, 5, 4, 3, 2, 1, 0].map((d) => usd(list?.get(d)?.early ?? 0)),
      });
    }
  }
  return out;
}
