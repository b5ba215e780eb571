/**
 * Income beside spend (docs/design.md 27): per calendar day of a range, what came into the accounts
 * (top-ups, redeemed codes, check-in and other rewards, refunds) and what went out, and the net.
 * Amounts the log gives only in its text (new-api's `＄10.000000 额度`) are read from it; a top-up
 * logged without any amount is taken from the site's top-up history the sync kept; a check-in
 * this service made whose site logs none that day counts from its own record, never twice.
 */
import type { Db } from "../db/client";
import { dayIn, dayStarts } from "../core/time";
import { planPurchaseQuota, topupQuota } from "../../shared/log-types";
import { round6, usdOfQuota } from "../../shared/money";
import { summaryOf, type Reader } from "./analytics";
import { boundOf, ledgerStore, type Owner } from "./store";
import type { UsageIncome } from "./check-schemas";

/** The check-ins this service made (actions/ above the ledger hands them in). */
export type CheckinSource = (
  owners: Owner[],
  from: number,
  to: number,
) => Promise<Array<{ siteId: number; siteUserId: number; at: number; quota: number }>>;

const REWARD = /签到|赠送|返利|奖励/;
const CHECKIN = /签到/;
const COMPENSATION = /补偿/;
const REDEEM = /兑换码/;

type Day = { topups: number; redeemed: number; rewards: number; refunds: number; planPaid: number; bought: number };
const zero = (): Day => ({ topups: 0, redeemed: 0, rewards: 0, refunds: 0, planPaid: 0, bought: 0 });

export async function usageIncome(
  db: Db,
  readers: Reader[],
  q: { from: string; to: string; tz: string },
  checkins: CheckinSource,
): Promise<UsageIncome> {
  const starts = dayStarts(q.tz, q.from, q.to);
  const from = Math.floor(starts[0]!.start / 1000);
  const to = Math.floor(starts[starts.length - 1]!.start / 1000);
  const days = starts.slice(0, -1).map((d) => d.day);
  const usd = new Map(days.map((d) => [d, zero()]));
  const since = readers.map((r) => ({ ...r, after: from - 1 }));
  const store = ledgerStore(db);
  const [moves, history, ours, spend, planHours] = await Promise.all([
    store.movesSince(since, to - 1),
    store.topupsSince(since, to - 1),
    checkins(readers, from, to),
    summaryOf(db, readers, { ...q, groupBy: "day" }),
    // What plans paid, by the hour (the verifying pass's sums): the wallet was not charged for it.
    readers.length === 0
      ? Promise.resolve([])
      : db.ledgerCheckHour.groupBy({
          by: ["siteId", "siteUserId", "hour"],
          where: {
            planQuota: { gt: 0 },
            OR: readers.map((r) => ({
              siteId: r.siteId,
              siteUserId: BigInt(r.siteUserId),
              hour: { gte: Math.floor(from / 3600) * 3600, lt: Math.min(to, boundOf(r)) },
            })),
          },
          _sum: { planQuota: true },
        }),
  ]);
  const byOwner = new Map(readers.map((r) => [`${r.siteId}:${r.siteUserId}`, r]));
  const dayOf = (at: number) => dayIn(q.tz, at * 1000);
  /** Per account and day: top-ups without an amount, and the amounts given (history matched against them). */
  const unamounted = new Map<string, { count: number; amounts: number[] }>();
  const checkedIn = new Set<string>();
  const perAccount = new Map(readers.map((r) => [`${r.siteId}:${r.siteUserId}`, 0]));
  const INCOME: ReadonlySet<keyof Day> = new Set(["topups", "redeemed", "rewards", "refunds"]);
  const add = (r: Reader, day: string, part: keyof Day, quota: number) => {
    const d = usd.get(day);
    if (!d) return;
    d[part] += usdOfQuota(quota, r.quotaPerUnit);
    const key = `${r.siteId}:${r.siteUserId}`;
    if (INCOME.has(part)) perAccount.set(key, (perAccount.get(key) ?? 0) + usdOfQuota(quota, r.quotaPerUnit));
  };
  for (const m of moves) {
    const r = byOwner.get(`${m.siteId}:${m.siteUserId}`);
    if (!r) continue;
    const day = dayOf(m.at);
    const key = `${m.siteId}:${m.siteUserId}:${day}`;
    const quota = Number(m.quota);
    // A plan bought (logged as a top-up) brought nothing into the wallet; bought from it, it took.
    const bought = m.type === "topup" ? planPurchaseQuota(m.content) : null;
    if (bought !== null) {
      add(r, day, "bought", bought);
      continue;
    }
    if (m.type === "refund") add(r, day, "refunds", quota);
    else if (COMPENSATION.test(m.content)) add(r, day, "refunds", topupQuota(quota, m.content, r.quotaPerUnit) ?? 0);
    else if (m.type !== "consume" && REWARD.test(m.content)) {
      if (CHECKIN.test(m.content)) checkedIn.add(key);
      add(r, day, "rewards", topupQuota(quota, m.content, r.quotaPerUnit) ?? 0);
    } else if (m.type === "topup") {
      const amount = topupQuota(quota, m.content, r.quotaPerUnit);
      const slot = unamounted.get(key) ?? { count: 0, amounts: [] };
      unamounted.set(key, slot);
      if (amount === null) slot.count++;
      else {
        slot.amounts.push(amount);
        add(r, day, REDEEM.test(m.content) ? "redeemed" : "topups", amount);
      }
    }
  }
  // A day with top-ups logged without an amount: the history's payments that day not given already.
  for (const h of history) {
    const r = byOwner.get(`${h.siteId}:${h.siteUserId}`);
    const day = dayOf(h.at);
    const slot = unamounted.get(`${h.siteId}:${h.siteUserId}:${day}`);
    if (!r || !slot || slot.count === 0) continue;
    const quota = Number(h.quota);
    const same = slot.amounts.indexOf(quota);
    if (same >= 0) slot.amounts.splice(same, 1);
    else add(r, day, "topups", quota);
  }
  // This service's check-ins where the site's log has none that day (a site that logs none).
  for (const c of ours) {
    const r = byOwner.get(`${c.siteId}:${c.siteUserId}`);
    const day = dayOf(c.at);
    if (r && !checkedIn.has(`${c.siteId}:${c.siteUserId}:${day}`)) add(r, day, "rewards", c.quota);
  }
  for (const h of planHours) {
    const r = byOwner.get(`${h.siteId}:${h.siteUserId}`);
    if (r) add(r, dayOf(Math.max(h.hour, from)), "planPaid", Number(h._sum.planQuota ?? 0));
  }
  const spent = new Map(spend.rows.map((row) => [row.key, row.usd]));
  const rows = days.map((day) => {
    const d = usd.get(day) ?? zero();
    const income = d.topups + d.redeemed + d.rewards + d.refunds;
    const spendUsd = spent.get(day) ?? 0;
    return {
      day,
      topupsUsd: round6(d.topups),
      redeemedUsd: round6(d.redeemed),
      rewardsUsd: round6(d.rewards),
      refundsUsd: round6(d.refunds),
      incomeUsd: round6(income),
      spendUsd: round6(spendUsd),
      planSpendUsd: round6(d.planPaid),
      plansBoughtUsd: round6(d.bought),
      netUsd: round6(income - (spendUsd - d.planPaid) - d.bought),
    };
  });
  const sum = (k: keyof (typeof rows)[number]) => round6(rows.reduce((s, r) => s + Number(r[k]), 0));
  return {
    from: q.from,
    to: q.to,
    tz: q.tz,
    rows,
    totals: {
      topupsUsd: sum("topupsUsd"),
      redeemedUsd: sum("redeemedUsd"),
      rewardsUsd: sum("rewardsUsd"),
      refundsUsd: sum("refundsUsd"),
      incomeUsd: sum("incomeUsd"),
      spendUsd: sum("spendUsd"),
      planSpendUsd: sum("planSpendUsd"),
      plansBoughtUsd: sum("plansBoughtUsd"),
      netUsd: sum("netUsd"),
    },
    accounts: readers.map((r) => ({
      siteId: r.siteId,
      userId: r.siteUserId,
      incomeUsd: round6(perAccount.get(`${r.siteId}:${r.siteUserId}`) ?? 0),
    })),
  };
}
