/**
 * What the prices read from an account's ledger (docs/design.md 22): the sums a model's price is fitted
 * from over the last 7 days (where the site publishes none), and the group ratio the newest call
 * was billed at (one-hub's `metadata.group_ratio`, new-api's `other.group_ratio`), for a group the
 * site does not name to a token.
 */
import type { Db } from "../db/client";
import { ledgerStore, ownerWhere, type Owner } from "./store";
import type { ModelFitSums } from "./store-sql";

const FIT_DAYS = 7;

export function fitSumsOf(db: Db, owner: Owner, now = Date.now()): Promise<ModelFitSums[]> {
  const to = Math.floor(now / 1000) + 1;
  return ledgerStore(db).modelFitSums(owner, { from: to - FIT_DAYS * 86_400, to });
}

export async function loggedGroupRatio(db: Db, owner: Owner): Promise<number | null> {
  const newest = await db.ledgerEntry.findFirst({
    where: { ...ownerWhere(owner), type: "consume", detail: { contains: "group_ratio" } },
    orderBy: { at: "desc" },
    select: { detail: true },
  });
  if (!newest?.detail) return null;
  try {
    const ratio = (JSON.parse(newest.detail) as Record<string, unknown>).group_ratio;
    return typeof ratio === "number" && Number.isFinite(ratio) && ratio >= 0 ? ratio : null;
  } catch {
    return null;
  }
}

/**
 * Which of `models` each account called since `sinceSec` (from the hourly totals), keyed
 * "siteId:siteUserId": what a price change is told for (alerts' price_changed).
 */
export async function modelsUsedSince(
  db: Db,
  owners: Owner[],
  models: string[],
  sinceSec: number,
): Promise<Map<string, Set<string>>> {
  const used = new Map<string, Set<string>>();
  if (owners.length === 0 || models.length === 0) return used;
  const rows = await db.ledgerHour.groupBy({
    by: ["siteId", "siteUserId", "model"],
    where: {
      OR: owners.map((o) => ownerWhere(o, { gte: Math.floor(sinceSec / 3600) * 3600 }, "hour")),
      type: "consume",
      model: { in: models },
    },
  });
  for (const r of rows) {
    const key = `${r.siteId}:${r.siteUserId}`;
    const set = used.get(key) ?? new Set<string>();
    set.add(r.model);
    used.set(key, set);
  }
  return used;
}

/** What an account is charged for a model against its site's list: see chargedOverList. */
export type ChargedOverList = { factor: number; entries: number };

/**
 * 核对's verdict on each account's price of each model (docs/figures.md): over its entries checked
 * against the site's list since `sinceSec`, what they were charged ÷ what the list (at the
 * account's group, cache as logged) would have charged, and how many entries that is; keyed
 * "siteId:siteUserId\nmodel", absent where no entry could be checked against the list.
 */
export async function chargedOverList(
  db: Db,
  owners: Owner[],
  sinceSec: number,
): Promise<Map<string, ChargedOverList>> {
  const out = new Map<string, ChargedOverList>();
  if (owners.length === 0) return out;
  const rows = await db.ledgerCheckHour.groupBy({
    by: ["siteId", "siteUserId", "model"],
    where: {
      OR: owners.map((o) => ownerWhere(o, { gte: Math.floor(sinceSec / 3600) * 3600 }, "hour")),
      listChecked: { gt: 0 },
    },
    _sum: { listChecked: true, listQuota: true, listExpected: true },
  });
  for (const r of rows) {
    const expected = Number(r._sum.listExpected ?? 0);
    const charged = Number(r._sum.listQuota ?? 0);
    if (!(expected > 0)) continue;
    const factor = Math.round((charged / expected) * 1e4) / 1e4;
    out.set(`${r.siteId}:${r.siteUserId}\n${r.model}`, { factor, entries: r._sum.listChecked ?? 0 });
  }
  return out;
}
