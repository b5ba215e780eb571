/** Balance history from elsewhere than the syncs: a sign-in's answer, the demo's known month. */
import type { Db } from "../db/client";

/**
 * Balances known from elsewhere (the demo's own history) kept as snapshots, for an account that has
 * none yet; returns how many were kept.
 */
export async function seedBalanceHistory(
  db: Db,
  account: { siteId: number; siteUserId: number },
  points: Array<{ at: number; quota: number }>,
): Promise<number> {
  const who = { siteId: account.siteId, siteUserId: BigInt(account.siteUserId) };
  if ((await db.balanceSnapshot.count({ where: who })) > 0) return 0;
  await db.balanceSnapshot.createMany({
    data: points.map((p) => ({ ...who, at: p.at, quota: BigInt(p.quota), usedQuota: 0n, requestCount: 0n })),
  });
  return points.length;
}

/** A count the site reports, kept when it is a whole number a snapshot can hold. */
const countOf = (value: unknown): bigint | null =>
  typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : null;

/**
 * The balance a site reported when it accepted a token (a sign-in, an account saved or
 * re-authorised), kept as a snapshot of that second: the account's row shows it before its first
 * sync, and 对账 counts it as the site's word. Fields missing or out of range: nothing is kept.
 */
export async function noteSignInBalance(
  db: Db,
  owner: { siteId: number; siteUserId: number },
  userInfo: Record<string, unknown>,
  now = Math.floor(Date.now() / 1000),
): Promise<void> {
  const quota = countOf(userInfo.quota);
  const usedQuota = countOf(userInfo.used_quota);
  const requestCount = countOf(userInfo.request_count);
  if (quota === null || usedQuota === null || requestCount === null) return;
  const who = { siteId: owner.siteId, siteUserId: BigInt(owner.siteUserId) };
  await db.balanceSnapshot.upsert({
    where: { siteId_siteUserId_at: { ...who, at: now } },
    create: { ...who, at: now, quota, usedQuota, requestCount },
    update: {},
    select: { at: true },
  });
}
