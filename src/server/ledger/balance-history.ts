/** Balance history from elsewhere than the syncs (the demo's known month). */
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
