/**
 * What the ledger answers in a site's stead (docs/design.md 18, 19). An account's summary as its last
 * sync left it: the balance the sync noted and today's spend from the ledger, with the sync's time
 * as `fetchedAt`; a workspace's 全部账户 shows these while they are fresh (the job runner keeps them
 * within one interval), so a page of 200 accounts asks no site at all, and 刷新 reads them live.
 */
import type { Db } from "../db/client";
import { usdOf, selfInfo } from "../gateway/reads";
import type { LiveSession } from "../session/store";
import type { Summary } from "../site-data/schemas";
import { siteRegistry } from "../sites/registry";
import { dayIn, dayStart } from "../core/time";
import { readersOf, summaryOf } from "./analytics";

type Owned = { siteId: number; siteUserId: bigint };
const ownerKey = (o: { siteId: number; siteUserId: number | bigint }) => `${o.siteId}:${Number(o.siteUserId)}`;

/** The accounts of these sessions, each once, as the ledger's tables name them. */
const ownersOf = (sessions: LiveSession[]): Owned[] =>
  [...new Map(sessions.map((s) => [ownerKey(s), s])).values()].map((s) => ({
    siteId: s.siteId,
    siteUserId: BigInt(s.siteUserId),
  }));

/**
 * The summaries from the ledger of every session's account whose last complete sync is at most
 * `maxAgeMs` old (and whose site has been probed, so its money settings are known), by the
 * session given; the others are left out. A handful of queries however many accounts.
 */
export async function storedSummaries(
  db: Db,
  sessions: LiveSession[],
  tz: string,
  maxAgeMs: number,
  now = Date.now(),
): Promise<Map<LiveSession, Summary>> {
  const out = new Map<LiveSession, Summary>();
  const withSite = sessions.filter((s) => s.site !== null);
  if (maxAgeMs <= 0 || withSite.length === 0) return out;
  const owners = ownersOf(withSite);
  const [states, sites] = await Promise.all([
    db.ledgerSync.findMany({
      where: { OR: owners, syncedAt: { gte: new Date(now - maxAgeMs) } },
      select: { siteId: true, siteUserId: true, syncedAt: true },
    }),
    siteRegistry(db).listProfiled(),
  ]);
  const siteOf = new Map(sites.map((s) => [s.id, s]));
  const fresh = states.filter((st) => {
    const site = siteOf.get(st.siteId);
    return st.syncedAt !== null && site !== undefined && site.probedAt !== null && site.family !== "unknown";
  });
  if (fresh.length === 0) return out;
  const syncedOf = new Map(fresh.map((st) => [ownerKey(st), Math.floor((st.syncedAt?.getTime() ?? 0) / 1000)]));
  // The balance noted by each sync that completed (a sync notes it first, then reads the log).
  const snapshots = await db.balanceSnapshot.findMany({
    where: {
      OR: fresh.map((st) => {
        const at = syncedOf.get(ownerKey(st)) ?? 0;
        return { siteId: st.siteId, siteUserId: st.siteUserId, at: { lte: at, gte: at - Math.ceil(maxAgeMs / 1000) } };
      }),
    },
    orderBy: { at: "desc" },
    select: { siteId: true, siteUserId: true, at: true, quota: true, usedQuota: true, requestCount: true },
  });
  const snapshotOf = new Map<string, (typeof snapshots)[number]>();
  for (const snap of snapshots) if (!snapshotOf.has(ownerKey(snap))) snapshotOf.set(ownerKey(snap), snap);
  const spent = await spentToday(
    db,
    withSite,
    fresh.map((st) => ({ siteId: st.siteId, siteUserId: st.siteUserId })),
    tz,
    now,
  );
  for (const session of withSite) {
    const key = ownerKey(session);
    const snap = snapshotOf.get(key);
    const site = siteOf.get(session.siteId);
    const today = spent.get(key);
    if (!snap || !site || !today) continue;
    const { money } = site;
    const quota = Number(snap.quota);
    const used = Number(snap.usedQuota);
    out.set(session, {
      site: { id: site.id, name: site.name, url: site.url, family: site.family },
      user: selfInfo(JSON.parse(session.userInfo) as Record<string, unknown>).user,
      money,
      balance: { quota, usd: usdOf(quota, money) },
      used: { quota: used, usd: usdOf(used, money) },
      requestCount: Number(snap.requestCount),
      today: { quota: today.quota, usd: usdOf(today.quota, money) },
      todayRequests: today.requests,
      fetchedAt: new Date(snap.at * 1000).toISOString(),
    });
  }
  return out;
}

/**
 * Today's consume totals (in `tz`) of each account: one grouped read of the hourly totals when
 * the day starts on a whole hour (as in every zone a whole number of hours from UTC), else the
 * analytics' exact split, account by account.
 */
async function spentToday(
  db: Db,
  sessions: LiveSession[],
  owners: Owned[],
  tz: string,
  now: number,
): Promise<Map<string, { quota: number; requests: number }>> {
  const day = dayIn(tz, now);
  const start = Math.floor(dayStart(tz, day) / 1000);
  const out = new Map<string, { quota: number; requests: number }>(
    owners.map((o) => [ownerKey(o), { quota: 0, requests: 0 }]),
  );
  if (start % 3600 === 0) {
    const rows = await db.ledgerHourTotal.groupBy({
      by: ["siteId", "siteUserId"],
      where: { OR: owners, type: "consume", hour: { gte: start } },
      _sum: { quota: true, requests: true },
    });
    for (const r of rows) out.set(ownerKey(r), { quota: Number(r._sum.quota ?? 0), requests: r._sum.requests ?? 0 });
    return out;
  }
  const wanted = new Set(out.keys());
  const readers = await readersOf(
    db,
    sessions.filter((s) => wanted.has(ownerKey(s))),
  );
  await Promise.all(
    readers.map(async (r) => {
      const sums = await summaryOf(db, [r], { from: day, to: day, tz, groupBy: "day" });
      out.set(ownerKey(r), { quota: sums.totals.quota, requests: sums.totals.requests });
    }),
  );
  return out;
}

/** A balance known for an account, in its site's units and USD, with when the site said it. */
export type KnownBalance = { balance: { quota: number; usd: number }; at: string };

/**
 * The accounts among these sessions' that no sync has completed for yet, with the balance their
 * site reported when it accepted the session's token within the last `maxAgeMs` (the user object
 * the session keeps): their rows show it until the first sync rather than each asking its site,
 * so 200 accounts added at once list at once. Two queries however many accounts.
 */
export async function awaitingFirstSync(
  db: Db,
  sessions: LiveSession[],
  maxAgeMs: number,
  now = Date.now(),
): Promise<Map<LiveSession, KnownBalance>> {
  const out = new Map<LiveSession, KnownBalance>();
  const recent = sessions.filter((s) => s.site !== null && s.createdAt.getTime() >= now - maxAgeMs);
  if (maxAgeMs <= 0 || recent.length === 0) return out;
  const owners = ownersOf(recent);
  const [synced, sites] = await Promise.all([
    db.ledgerSync.findMany({
      where: { OR: owners, syncedAt: { not: null } },
      select: { siteId: true, siteUserId: true },
    }),
    siteRegistry(db).listProfiled(),
  ]);
  const done = new Set(synced.map(ownerKey));
  const siteOf = new Map(sites.map((s) => [s.id, s]));
  for (const session of recent) {
    const site = siteOf.get(session.siteId);
    if (done.has(ownerKey(session)) || !site) continue;
    const quota = (JSON.parse(session.userInfo) as { quota?: unknown }).quota;
    if (typeof quota !== "number" || !Number.isSafeInteger(quota)) continue;
    out.set(session, { balance: { quota, usd: usdOf(quota, site.money) }, at: session.createdAt.toISOString() });
  }
  return out;
}
