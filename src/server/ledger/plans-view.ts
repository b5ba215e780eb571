/**
 * 套餐 as read (docs/design.md 27): each account's plans as its site last listed them, with what is
 * left of each one's window, its next reset and its end; the range's spend split between the
 * wallet and the plans (the verifying pass's sums of `billing_source`); and 可用天数 at the last 7
 * days' pace with the plans folded in, beside the wallet alone.
 */
import type { Db } from "../db/client";
import { dayStart, nextDay } from "../core/time";
import { round6, usdOfQuota } from "../../shared/money";
import { planActive, planTitle, planWindow, type Plan } from "../gateway/plans";
import { weekPace, type Reader } from "./analytics";
import { accountName } from "./check-view";
import { boundOf, ownerKey } from "./owner";
import { daysLeftWith, storedPlans } from "./plans";
import { ledgerStore } from "./store";
import type { UsagePlans } from "./plan-schemas";

const iso = (s: number) => (s > 0 ? new Date(s * 1000).toISOString() : null);

function planView(p: Plan, qpu: number, now: number) {
  const usd = (q: number) => round6(usdOfQuota(q, qpu));
  const window = planWindow(p, now);
  return {
    id: p.id,
    planId: p.planId,
    title: planTitle(p),
    status: p.status === "active" && p.end <= now ? ("expired" as const) : p.status,
    source: p.source,
    totalUsd: p.total > 0 ? usd(p.total) : null,
    usedUsd: usd(window.used),
    remainingUsd: window.left === null ? null : usd(window.left),
    usedPct: window.usedPct,
    resetPeriod: p.resetPeriod,
    nextResetAt: p.nextReset > 0 && p.nextReset < p.end ? iso(p.nextReset) : null,
    startedAt: iso(p.start),
    endsAt: iso(p.end),
    overflow: p.overflow,
  };
}

export async function usagePlans(
  db: Db,
  readers: Reader[],
  q: { from: string; to: string; tz: string },
  nowMs = Date.now(),
): Promise<UsagePlans> {
  const from = dayStart(q.tz, q.from) / 1000;
  const to = dayStart(q.tz, nextDay(q.to)) / 1000;
  const now = Math.floor(nowMs / 1000);
  const [kept, sums, balances] = await Promise.all([
    storedPlans(db, readers),
    readers.length === 0
      ? Promise.resolve([])
      : db.ledgerCheckHour.groupBy({
          by: ["siteId", "siteUserId"],
          where: {
            OR: readers.map((r) => ({
              siteId: r.siteId,
              siteUserId: BigInt(r.siteUserId),
              hour: { gte: Math.floor(from / 3600) * 3600, lt: Math.min(to, boundOf(r)) },
            })),
          },
          _sum: { quota: true, planQuota: true, planEntries: true },
        }),
    ledgerStore(db).lastSnapshots(readers, 2_147_483_647),
  ]);
  const spent = new Map(sums.map((s) => [ownerKey(s), s._sum]));
  const balanceOf = new Map(balances.map((b) => [ownerKey(b), b.quota]));
  // The accounts with plans, or spend a plan paid in the range; each one's pace read side by side.
  const shown = readers.filter(
    (r) => kept.get(ownerKey(r))?.supported || Number(spent.get(ownerKey(r))?.planQuota ?? 0) > 0,
  );
  const paces = await Promise.all(shown.map((r) => weekPace(db, r, now)));
  const accounts = shown.map((r, i): UsagePlans["accounts"][number] => {
    const held = kept.get(ownerKey(r));
    const s = spent.get(ownerKey(r));
    const planQuota = Number(s?.planQuota ?? 0);
    const usd = (quota: number) => round6(usdOfQuota(quota, r.quotaPerUnit));
    const perDay = paces[i] ?? 0;
    const balance = balanceOf.get(ownerKey(r)) ?? null;
    return {
      key: r.key,
      site: r.site?.name ?? "已移除的站点",
      account: accountName(r),
      supported: held?.supported ?? false,
      readAt: held ? new Date(held.readAt * 1000).toISOString() : null,
      preference: held?.supported ? held.preference : null,
      plans: (held?.plans ?? [])
        .filter((p) => planActive(p, now) || (p.end >= from && p.start < to))
        .sort((a, b) => a.end - b.end || a.id - b.id)
        .map((p) => planView(p, r.quotaPerUnit, now)),
      walletSpendUsd: usd(Number(s?.quota ?? 0) - planQuota),
      planSpendUsd: usd(planQuota),
      planRequests: Number(s?.planEntries ?? 0),
      daysLeft: daysLeftWith(held, balance, perDay, now),
      walletDaysLeft: daysLeftWith(undefined, balance, perDay, now),
    };
  });
  const total = (k: "walletSpendUsd" | "planSpendUsd" | "planRequests") =>
    round6(accounts.reduce((sum, a) => sum + a[k], 0));
  return {
    from: q.from,
    to: q.to,
    tz: q.tz,
    accounts,
    totals: {
      walletSpendUsd: total("walletSpendUsd"),
      planSpendUsd: total("planSpendUsd"),
      planRequests: total("planRequests"),
      activePlans: accounts.reduce((n, a) => n + a.plans.filter((p) => p.status === "active").length, 0),
    },
  };
}
