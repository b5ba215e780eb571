/**
 * Where the ledgers' syncs stand, as the background jobs, a workspace's rows and /admin read it:
 * when each last synced, its last error, whether one runs now.
 */
import type { Db } from "../db/client";

/**
 * When each of these accounts' ledgers was last synced (ms; 0 for never), by `siteId:siteUserId`.
 * A window left half read (its sync stopped at a run limit, or its holder died) counts as never:
 * the next look goes on from its cursor instead of waiting for the account's next moment.
 */
export async function lastSyncsOf(
  db: Db,
  owners: { siteId: number; siteUserId: number }[],
): Promise<Map<string, number>> {
  if (owners.length === 0) return new Map();
  const states = await db.ledgerSync.findMany({
    where: { OR: owners.map((o) => ({ siteId: o.siteId, siteUserId: BigInt(o.siteUserId) })) },
    select: { siteId: true, siteUserId: true, syncedAt: true, cursor: true },
  });
  return new Map(
    states.map((s) => [`${s.siteId}:${s.siteUserId}`, s.cursor !== null ? 0 : (s.syncedAt?.getTime() ?? 0)]),
  );
}

/**
 * Where each of these accounts' background syncs stand: the last one finished, the last error in
 * words (null after a success), whether one is under way now (a live lease, on any instance).
 */
export async function syncStates(
  db: Db,
  owners: { siteId: number; siteUserId: number }[],
  now = new Date(),
): Promise<Map<string, { syncedAt: Date | null; lastError: string | null; running: boolean }>> {
  if (owners.length === 0) return new Map();
  const rows = await db.ledgerSync.findMany({
    where: { OR: owners.map((o) => ({ siteId: o.siteId, siteUserId: BigInt(o.siteUserId) })) },
    select: { siteId: true, siteUserId: true, syncedAt: true, lastError: true, holder: true, leaseUntil: true },
  });
  return new Map(
    rows.map((r) => [
      `${r.siteId}:${r.siteUserId}`,
      {
        syncedAt: r.syncedAt,
        lastError: r.lastError,
        running: r.holder !== null && r.leaseUntil !== null && r.leaseUntil.getTime() > now.getTime(),
      },
    ]),
  );
}

/** How many ledgers of each site ended their last sync in an error. */
export async function failingBySite(db: Db): Promise<Map<number, number>> {
  const rows = await db.ledgerSync.groupBy({
    by: ["siteId"],
    where: { lastError: { not: null } },
    _count: { _all: true },
  });
  return new Map(rows.map((r) => [r.siteId, r._count._all]));
}
