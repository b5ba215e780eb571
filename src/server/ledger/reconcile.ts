/**
 * 对账 (docs/design.md 21): for each day of an account, the balance change its snapshots saw against
 * what its log explains (−the wallet's consumption + top-ups + check-in rewards + refunds), and the
 * difference. The wallet's consumption leaves out the calls a plan paid and counts the plans bought
 * from the wallet (new-api's subscriptions).
 * A day whose difference is past the tolerance is flagged: a deduction the log does not show, a
 * top-up never logged, a site's statistics bug. Top-ups and rewards logged without an amount in
 * their quota are read from their text (`＄10.000000 额度`), as the families write them; where the
 * text has none either, from the site's top-up history (new-api) the sync kept.
 */
import type { Db } from "../db/client";
import { dayStarts } from "../core/time";
import { planPurchaseQuota, topupQuota } from "../../shared/log-types";
import { usdOfQuota } from "../../shared/money";
import { ledgerStore, type Owner } from "./store";
import { ownerKey } from "./owner";

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

/** A day of 对账 in US dollars (the API's and the CSV's view), amounts to the millionth. */
export type ReconciledDayUsd = {
  day: string;
  from: string | null;
  to: string | null;
  changeUsd: number | null;
  consumptionUsd: number;
  topupsUsd: number;
  rewardsUsd: number;
  refundsUsd: number;
  adjustments: number;
  expectedUsd: number | null;
  differenceUsd: number | null;
  flagged: boolean;
};

/** A day's figures in US dollars, at the site's quota units a dollar. */
export function reconciledUsd(d: ReconciledDay, quotaPerUnit: number): ReconciledDayUsd {
  const usd = (quota: number) => usdOfQuota(quota, quotaPerUnit);
  return {
    day: d.day,
    from: d.from,
    to: d.to,
    changeUsd: d.change === null ? null : usd(d.change),
    consumptionUsd: usd(d.consumption),
    topupsUsd: usd(d.topups),
    rewardsUsd: usd(d.rewards),
    refundsUsd: usd(d.refunds),
    adjustments: d.adjustments,
    expectedUsd: d.expected === null ? null : usd(d.expected),
    differenceUsd: d.difference === null ? null : usd(d.difference),
    flagged: d.flagged,
  };
}

/** A difference is flagged past this many quota units ($0.01 at 500,000 a dollar) or 1% of the day's use. */
const toleranceOf = (quotaPerUnit: number, consumption: number) => Math.max(quotaPerUnit / 100, consumption / 100);

const REWARD = /签到/;

export type ReconciledOwner = Owner & { quotaPerUnit: number };

/** Accounts read per query (two values each in its OR). */
const OWNERS_PER_QUERY = 200;

type Snap = { at: number; quota: number };
type Move = { at: number; type: string; quota: number; content: string };

/** What one account's days are measured by, before the consumption of their windows is known. */
type Plan = {
  day: string;
  measured: { open: Snap; close: Snap } | null;
  /** The seconds the day's log is read over: (after, upTo]. */
  after: number;
  upTo: number;
};

export async function reconcile(
  db: Db,
  owner: ReconciledOwner,
  q: { from: string; to: string; tz: string },
): Promise<ReconciledDay[]> {
  return (await reconcileMany(db, [owner], q)).get(ownerKey(owner)) ?? [];
}

/**
 * 对账 of many accounts over the same days, in a fixed number of reads: per batch of accounts, the
 * balances before the range, the range's snapshots, balance moves and top-up history, then the
 * consumption of every day's window in a few statements. Keyed "siteId:siteUserId".
 */
export async function reconcileMany(
  db: Db,
  owners: ReconciledOwner[],
  q: { from: string; to: string; tz: string },
): Promise<Map<string, ReconciledDay[]>> {
  // Each day of the range, and the start of the day after it (its end).
  const days = dayStarts(q.tz, q.from, q.to);
  const rangeStart = Math.floor(days[0]!.start / 1000);
  const rangeEnd = Math.floor(days[days.length - 1]!.start / 1000);
  const out = new Map<string, ReconciledDay[]>();
  for (let i = 0; i < owners.length; i += OWNERS_PER_QUERY) {
    const batch = owners.slice(i, i + OWNERS_PER_QUERY);
    for (const [key, list] of await reconcileBatch(db, batch, days, rangeStart, rangeEnd)) out.set(key, list);
  }
  return out;
}

async function reconcileBatch(
  db: Db,
  owners: ReconciledOwner[],
  days: Array<{ day: string; start: number }>,
  rangeStart: number,
  rangeEnd: number,
): Promise<Map<string, ReconciledDay[]>> {
  const store = ledgerStore(db);
  // The last balance at or before the range's start, per account.
  const opening = new Map((await store.lastSnapshots(owners, rangeStart)).map((s) => [ownerKey(s), s]));
  // Moves and top-ups from each account's opening balance on (the first day is measured from it).
  const since = owners.map((o) => ({
    siteId: o.siteId,
    siteUserId: o.siteUserId,
    ...(o.until === undefined ? {} : { until: o.until }),
    after: Math.min(opening.get(ownerKey(o))?.at ?? rangeStart, rangeStart - 1),
  }));
  const [snapshots, moves, history] = await Promise.all([
    store.snapshotsBetween(owners, rangeStart, rangeEnd),
    store.movesSince(since, rangeEnd),
    store.topupsSince(since, rangeEnd),
  ]);
  const group = <T extends { siteId: number; siteUserId: number }>(rows: T[]) => {
    const by = new Map<string, T[]>();
    for (const r of rows) {
      const k = ownerKey(r);
      const list = by.get(k);
      if (list) list.push(r);
      else by.set(k, [r]);
    }
    return by;
  };
  const snapsOf = group(snapshots);
  const movesOf = group(moves);
  const historyOf = group(history);
  // Each account's days, and the windows whose consumption is then summed in one go.
  const plans = owners.map((o) => planDays(days, opening.get(ownerKey(o)) ?? null, snapsOf.get(ownerKey(o)) ?? []));
  const windows = owners.flatMap((o, i) =>
    plans[i]!.map((p) => ({
      siteId: o.siteId,
      siteUserId: o.siteUserId,
      until: o.until,
      after: p.after,
      upTo: p.upTo,
    })),
  );
  const sums = await store.windowSums(windows);
  const out = new Map<string, ReconciledDay[]>();
  let w = 0;
  owners.forEach((o, i) => {
    const k = ownerKey(o);
    out.set(
      k,
      plans[i]!.map((plan) => dayOf(o, plan, sums[w++] ?? 0, movesOf.get(k) ?? [], historyOf.get(k) ?? [])),
    );
  });
  return out;
}

/** Which snapshots measure each day: the last at the day's start (or the day's first), and the day's last. */
function planDays(days: Array<{ day: string; start: number }>, opening: Snap | null, snapshots: Snap[]): Plan[] {
  const plans: Plan[] = [];
  let before = opening;
  let next = 0;
  for (let i = 0; i + 1 < days.length; i++) {
    const { day, start } = days[i]!;
    const startS = Math.floor(start / 1000);
    const endS = Math.floor(days[i + 1]!.start / 1000);
    let first: Snap | null = null;
    let last: Snap | null = null;
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
    // Unmeasured, the day's own seconds: [startS, endS) is (startS − 1, endS − 1].
    plans.push(
      measured
        ? { day, measured, after: measured.open.at, upTo: measured.close.at }
        : { day, measured: null, after: startS - 1, upTo: endS - 1 },
    );
  }
  return plans;
}

function dayOf(
  owner: ReconciledOwner,
  plan: Plan,
  consumption: number,
  allMoves: Move[],
  history: Snap[],
): ReconciledDay {
  const inWindow = (at: number) => at > plan.after && at <= plan.upTo;
  let topups = 0;
  let rewards = 0;
  let refunds = 0;
  let adjustments = 0;
  let unamounted = 0;
  const amounted: number[] = [];
  // A plan bought from the wallet is spent as a call is (its logged quota is 0, its text says how much).
  let spent = consumption;
  for (const m of allMoves) {
    if (!inWindow(m.at)) continue;
    const quota = Number(m.quota);
    const bought = m.type === "topup" ? planPurchaseQuota(m.content) : null;
    if (bought !== null) spent += bought;
    else if (m.type === "refund") refunds += quota;
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
    for (const h of history) {
      if (!inWindow(h.at)) continue;
      const quota = Number(h.quota);
      const same = amounted.indexOf(quota);
      if (same >= 0) amounted.splice(same, 1);
      else topups += quota;
    }
  }
  const { measured } = plan;
  const change = measured ? Number(measured.close.quota) - Number(measured.open.quota) : null;
  const expected = measured ? -spent + topups + rewards + refunds : null;
  const difference = change !== null && expected !== null ? change - expected : null;
  return {
    day: plan.day,
    from: measured ? new Date(measured.open.at * 1000).toISOString() : null,
    to: measured ? new Date(measured.close.at * 1000).toISOString() : null,
    change,
    consumption: spent,
    topups,
    rewards,
    refunds,
    adjustments,
    expected,
    difference,
    flagged: difference !== null && Math.abs(difference) > toleranceOf(owner.quotaPerUnit, spent),
  };
}
