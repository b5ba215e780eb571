/**
 * An account's summary as its last sync left it (design.md 18, 19): the balance the sync noted and
 * today's spend from the ledger, with the sync's time as `fetchedAt`. A workspace's 全部账户 shows
 * these while they are fresh (the job runner keeps them within one interval), so a page of 200
 * accounts asks no site at all; 刷新 reads them live.
 */
import type { Db } from "../db/client";
import { usdOf, selfInfo } from "../gateway/reads";
import type { LiveSession } from "../session/store";
import type { Summary } from "../site-data/schemas";
import { siteRegistry } from "../sites/registry";
import { dayIn } from "../core/time";
import { readersOf, summaryOf } from "./analytics";

/**
 * The summary from the ledger when the account's last complete sync is at most `maxAgeMs` old
 * (and the site has been probed, so its money settings are known); null otherwise.
 */
export async function storedSummary(
  db: Db,
  session: LiveSession,
  tz: string,
  maxAgeMs: number,
  now = Date.now(),
): Promise<Summary | null> {
  if (maxAgeMs <= 0 || session.site === null) return null;
  const owner = { siteId: session.siteId, siteUserId: BigInt(session.siteUserId) };
  const [state, site] = await Promise.all([
    db.ledgerSync.findUnique({
      where: { siteId_siteUserId: owner },
      select: { syncedAt: true },
    }),
    siteRegistry(db).profiled(session.siteId),
  ]);
  const syncedAt = state?.syncedAt?.getTime() ?? 0;
  if (!site || site.probedAt === null || site.family === "unknown" || now - syncedAt > maxAgeMs) return null;
  // The balance noted by the sync that completed (a sync notes it first, then reads the log).
  const snapshot = await db.balanceSnapshot.findFirst({
    where: { ...owner, at: { lte: Math.floor(syncedAt / 1000) } },
    orderBy: { at: "desc" },
    select: { at: true, quota: true, usedQuota: true, requestCount: true },
  });
  if (!snapshot || syncedAt - snapshot.at * 1000 > maxAgeMs) return null;
  const [reader] = await readersOf(db, [session]);
  if (!reader) return null;
  const today = dayIn(tz, now);
  const spent = await summaryOf(db, [reader], { from: today, to: today, tz, groupBy: "day" });
  const { money } = site;
  const quota = Number(snapshot.quota);
  const used = Number(snapshot.usedQuota);
  const todayQuota = spent.totals.quota;
  return {
    site: { id: site.id, name: site.name, url: site.url, family: site.family },
    user: selfInfo(JSON.parse(session.userInfo) as Record<string, unknown>).user,
    money,
    balance: { quota, usd: usdOf(quota, money) },
    used: { quota: used, usd: usdOf(used, money) },
    requestCount: Number(snapshot.requestCount),
    today: { quota: todayQuota, usd: usdOf(todayQuota, money) },
    todayRequests: spent.totals.requests,
    fetchedAt: new Date(snapshot.at * 1000).toISOString(),
  };
}
