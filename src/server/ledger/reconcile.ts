/**
 * 对账 (design.md 21): for each day of an account, the balance change its snapshots saw against
 * what its log explains (−consumption + top-ups + check-in rewards + refunds), and the difference.
 * A day whose difference is past the tolerance is flagged: a deduction the log does not show, a
 * top-up never logged, a site's statistics bug. Top-ups and rewards logged without an amount in
 * their quota are read from their text (`＄10.000000 额度`), as the families write them; where the
 * text has none either, from the site's top-up history (new-api) the sync kept.
 */
import type { Db } from "../db/client";
import { dayStarts } from "../core/time";
import { topupQuota } from "../../shared/log-types";

export type ReconciledDay = {
  day: string;
  /** The snapshots the day is measured between (ISO); null when the day has fewer than two. */
  from: string | null;
  to: string | null;
  /** In the site's quota units. */
  change: number | null;
  consumption: number;
  topups: number;
  rewards: number;
  refunds: number;
  /** Entries that move the balance by an amount the log does not give (an administrator's change). */
  adjustments: number;
  expected: number | null;
  difference: number | null;
  flagged: boolean;
};

/** A difference is flagged past this many quota units ($0.01 at 500,000 a dollar) or 1% of the day's use. */
const toleranceOf = (quotaPerUnit: number, consumption: number) => Math.max(quotaPerUnit / 100, consumption / 100);

const REWARD = /签到/;

export async function reconcile(
  db: Db,
  owner: { siteId: number; siteUserId: number; quotaPerUnit: number },
  q: { from: string; to: string; tz: string },
): Promise<ReconciledDay[]> {
  const who = { siteId: owner.siteId, siteUserId: BigInt(owner.siteUserId) };
  // Each day of the range, and the start of the day after it (its end).
  const days = dayStarts(q.tz, q.from, q.to);
  const rangeStart = Math.floor(days[0]!.start / 1000);
  const rangeEnd = Math.floor(days[days.length - 1]!.start / 1000);
  const select = { at: true, quota: true } as const;
  // The balance before the range, then its snapshots, balance moves and top-up history (from that
  // balance on) in three reads; each day then asks only for its consumption between the snapshots it is measured by.
  const opening = await db.balanceSnapshot.findFirst({
    where: { ...who, at: { lte: rangeStart } },
    orderBy: { at: "desc" },
    select,
  });
  const movesFrom = Math.min(opening?.at ?? rangeStart, rangeStart - 1);
  const [snapshots, allMoves, history] = await Promise.all([
    db.balanceSnapshot.findMany({
      where: { ...who, at: { gt: rangeStart, lt: rangeEnd } },
      orderBy: { at: "asc" },
      select,
    }),
    db.ledgerEntry.findMany({
      where: {
        ...who,
        type: { not: "consume" },
        at: { gt: movesFrom, lte: rangeEnd },
      },
      select: { at: true, type: true, quota: true, content: true },
    }),
    db.ledgerTopup.findMany({
      where: { ...who, at: { gt: movesFrom, lte: rangeEnd } },
      select: { at: true, quota: true },
    }),
  ]);
  const out: ReconciledDay[] = [];
  let before = opening;
  let next = 0;
  for (let i = 0; i + 1 < days.length; i++) {
    const { day, start } = days[i]!;
    const startS = Math.floor(start / 1000);
    const endS = Math.floor(days[i + 1]!.start / 1000);
    // The last snapshot at the day's start (or the day's first), and the day's last.
    let first: typeof opening = null;
    let last: typeof opening = null;
    while (next < snapshots.length && snapshots[next]!.at < endS) {
      const snap = snapshots[next]!;
      if (snap.at <= startS) before = snap;
      else {
        first ??= snap;
        last = snap;
      }
      next++;
    }
    const open = before ?? first;
    const close = last;
    if (last) before = last;
    const measured = open && close && close.at > open.at ? { open, close } : null;
    const inWindow = measured
      ? (at: number) => at > measured.open.at && at <= measured.close.at
      : (at: number) => at >= startS && at < endS;
    const window = measured ? { gt: measured.open.at, lte: measured.close.at } : { gte: startS, lt: endS };
    const used = await db.ledgerEntry.aggregate({
      where: { ...who, type: "consume", at: window },
      _sum: { quota: true },
    });
    const moves = allMoves.filter((m) => inWindow(m.at));
    const consumption = Number(used._sum.quota ?? 0n);
    let topups = 0;
    let rewards = 0;
    let refunds = 0;
    let adjustments = 0;
    let unamounted = 0;
    const amounted: number[] = [];
    for (const m of moves) {
      const quota = Number(m.quota);
      if (m.type === "refund") refunds += quota;
      else if (REWARD.test(m.content)) rewards += topupQuota(quota, m.content, owner.quotaPerUnit) ?? 0;
      else if (m.type === "topup") {
        const amount = topupQuota(quota, m.content, owner.quotaPerUnit);
        if (amount === null) unamounted++;
        else {
          topups += amount;
          amounted.push(amount);
        }
      } else if (m.type === "manage") adjustments++;
    }
    // Top-ups logged without an amount: the site's top-up history in the same window says how much
    // (those of its payments the log already gave an amount for are not counted twice).
    if (unamounted > 0) {
      for (const h of history.filter((t) => inWindow(t.at))) {
        const quota = Number(h.quota);
        const same = amounted.indexOf(quota);
        if (same >= 0) amounted.splice(same, 1);
        else topups += quota;
      }
    }
    const change = measured ? Number(measured.close.quota) - Number(measured.open.quota) : null;
    const expected = measured ? -consumption + topups + rewards + refunds : null;
    const difference = change !== null && expected !== null ? change - expected : null;
    out.push({
      day,
      from: measured ? new Date(measured.open.at * 1000).toISOString() : null,
      to: measured ? new Date(measured.close.at * 1000).toISOString() : null,
      change,
      consumption,
      topups,
      rewards,
      refunds,
      adjustments,
      expected,
      difference,
      flagged: difference !== null && Math.abs(difference) > toleranceOf(owner.quotaPerUnit, consumption),
    });
  }
  return out;
}
