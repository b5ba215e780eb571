/**
 * An account's plans as its site last listed them (docs/design.md 27): read by the sync at most
 * every PLANS_READ_SECONDS (new-api's `/api/subscription/self`, and its plan list for titles),
 * kept whole in ledger_plans with the billing preference, and read back for 套餐, 可用天数 and the
 * plan alerts without asking the site. A former holder (an owner with `until`) sees no plans read
 * after its bound.
 */
import type { Db } from "../db/client";
import { RESET_PERIODS, runway, type Plan, type PlanPreference, type PlansRead } from "../gateway/plans";
import { SiteDataError, type Account, type LedgerReader } from "../site-data/site-data";
import { boundOf, ownerKey, type Owner } from "./owner";
import { LedgerBusy } from "./sync-leases";
import { MSG } from "../core/messages";

/** How often the sync asks a site for an account's plans. */
const PLANS_READ_SECONDS = 15 * 60;

const ownerOf = (account: Account) => ({ siteId: account.siteId, siteUserId: BigInt(account.siteUserId) });

/**
 * Reads and keeps the account's plans when they are due (`readAt` is when they were last read),
 * under the sync's lease (`holder`: a holder whose lease lapsed keeps nothing, LedgerBusy). A
 * site that cannot tell now (unreachable, an answer in no known shape) leaves the kept plans as
 * they were until the next read is due; the sync goes on either way.
 */
export async function notePlans(
  db: Db,
  account: Account,
  reader: Pick<LedgerReader, "plans">,
  now: number,
  readAt: number | null,
  holder: string,
): Promise<void> {
  if (readAt !== null && now - readAt < PLANS_READ_SECONDS && readAt <= now) return;
  let read: PlansRead | null;
  try {
    read = await reader.plans();
  } catch (error) {
    if (!(error instanceof SiteDataError)) throw error;
    await db.ledgerSync.updateMany({ where: { ...ownerOf(account), holder }, data: { plansReadAt: now } });
    return;
  }
  const owner = ownerOf(account);
  const plans = read?.plans ?? [];
  await db.$transaction(async (tx) => {
    const { count } = await tx.ledgerSync.updateMany({
      where: { ...owner, holder },
      data: { plansReadAt: now, planPreference: read?.preference ?? null },
    });
    if (count === 0) throw new LedgerBusy(MSG.syncLeaseLost);
    await tx.ledgerPlan.deleteMany({
      where: { ...owner, subscriptionId: { notIn: plans.map((p) => p.id) } },
    });
    for (const p of plans) {
      const data = {
        planId: p.planId,
        title: p.title,
        status: p.status,
        source: p.source,
        total: BigInt(p.total),
        used: BigInt(p.used),
        startAt: p.start,
        endAt: p.end,
        nextReset: p.nextReset,
        lastReset: p.lastReset,
        resetPeriod: p.resetPeriod,
        resetSeconds: p.resetSeconds,
        overflow: p.overflow,
      };
      await tx.ledgerPlan.upsert({
        where: { siteId_siteUserId_subscriptionId: { ...owner, subscriptionId: p.id } },
        create: { ...owner, subscriptionId: p.id, ...data },
        update: data,
        select: { subscriptionId: true },
      });
    }
  });
}

/**
 * An account's kept plans: when read, the preference, and every subscription the site listed;
 * `supported` false where its site has no subscriptions (not new-api, or a build before them).
 */
export type StoredPlans = PlansRead & { readAt: number; supported: boolean };

/** The kept plans of each owner whose site has been asked (keyed "siteId:siteUserId"). */
export async function storedPlans(db: Db, owners: Owner[]): Promise<Map<string, StoredPlans>> {
  const out = new Map<string, StoredPlans>();
  if (owners.length === 0) return out;
  const where = { OR: owners.map((o) => ({ siteId: o.siteId, siteUserId: BigInt(o.siteUserId) })) };
  const [syncs, rows] = await Promise.all([
    db.ledgerSync.findMany({
      where: { ...where, plansReadAt: { not: null } },
      select: { siteId: true, siteUserId: true, plansReadAt: true, planPreference: true },
    }),
    db.ledgerPlan.findMany({
      where,
      orderBy: [{ endAt: "desc" }, { subscriptionId: "desc" }],
      select: {
        siteId: true,
        siteUserId: true,
        subscriptionId: true,
        planId: true,
        title: true,
        status: true,
        source: true,
        total: true,
        used: true,
        startAt: true,
        endAt: true,
        nextReset: true,
        lastReset: true,
        resetPeriod: true,
        resetSeconds: true,
        overflow: true,
      },
    }),
  ]);
  const bound = new Map(owners.map((o) => [ownerKey(o), boundOf(o)]));
  for (const s of syncs) {
    const readAt = s.plansReadAt ?? 0;
    // A former holder's view ends at its bound: plans read after it are not its to see.
    if (readAt >= (bound.get(ownerKey(s)) ?? 0)) continue;
    const preference = (s.planPreference ?? "subscription_first") as PlanPreference;
    out.set(ownerKey(s), { readAt, preference, plans: [], supported: s.planPreference !== null });
  }
  for (const r of rows) {
    const held = out.get(ownerKey(r));
    if (!held) continue;
    held.plans.push({
      id: r.subscriptionId,
      planId: r.planId,
      title: r.title,
      status: r.status === "active" || r.status === "cancelled" ? r.status : "expired",
      source: r.source,
      total: Number(r.total),
      used: Number(r.used),
      start: r.startAt,
      end: r.endAt,
      nextReset: r.nextReset,
      lastReset: r.lastReset,
      resetPeriod: RESET_PERIODS.find((p) => p === r.resetPeriod) ?? null,
      resetSeconds: r.resetSeconds,
      overflow: r.overflow,
    } satisfies Plan);
  }
  return out;
}

/**
 * 可用天数 with plans folded in: the days the wallet and the plans together last at `perDay`
 * (quota a day), to one decimal; the wallet alone where the account has no plans. Null without spend.
 */
export function daysLeftWith(plans: PlansRead | undefined, balance: number | null, perDay: number, now: number) {
  if (balance === null || !(perDay > 0)) return null;
  const days = runway(balance, perDay, plans ?? null, now);
  return days === null ? null : Math.round(days * 10) / 10;
}
