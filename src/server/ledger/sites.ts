/**
 * The ledger as site administration sees it (admin/ sits below the ledger and is handed this): how
 * many entries each site's ledger holds, and setting a moved site's history apart.
 */
import type { SiteLedger } from "../admin/sites";
import type { Db } from "../db/client";

export function siteLedger(db: Db): SiteLedger {
  return {
    async entriesBySite() {
      const rows = await db.ledgerEntry.groupBy({ by: ["siteId"], _count: { _all: true } });
      return new Map(rows.map((r) => [r.siteId, r._count._all]));
    },
    archive: (siteId, url) => archiveSiteLedger(db, siteId, url),
  };
}

/**
 * Sets a site's ledger apart (the site moved to an address that is another gateway): its rows move
 * to `site_id = -archive id` in one transaction, so nobody signed in at the new address reads the
 * previous gateway's history. Returns the archive's id and how many entries it holds.
 */
async function archiveSiteLedger(
  db: Db,
  siteId: number,
  url: string,
  now = new Date(),
): Promise<{ archiveId: number; entries: number }> {
  return db.$transaction(async (tx) => {
    const entries = await tx.ledgerEntry.count({ where: { siteId } });
    const archive = await tx.ledgerArchive.create({
      data: { siteId, url, archivedAt: now, entries },
      select: { id: true },
    });
    const moved = { where: { siteId }, data: { siteId: -archive.id } };
    await tx.ledgerEntry.updateMany(moved);
    await tx.ledgerHour.updateMany(moved);
    await tx.ledgerHourTotal.updateMany(moved);
    await tx.ledgerCheckHour.updateMany(moved);
    await tx.ledgerSpeed.updateMany(moved);
    await tx.ledgerFlag.updateMany(moved);
    await tx.balanceSnapshot.updateMany(moved);
    await tx.ledgerSync.updateMany(moved);
    return { archiveId: archive.id, entries };
  });
}

/**
 * Deletes one account's ledger (its entries, hourly totals, 核对 sums, flags and speeds, balance snapshots
 * and sync state), in one transaction; returns how many entries went. A sync under way notices its lease is gone.
 */
export async function deleteAccountLedger(db: Db, owner: { siteId: number; siteUserId: number }): Promise<number> {
  const where = { siteId: owner.siteId, siteUserId: BigInt(owner.siteUserId) };
  return db.$transaction(async (tx) => {
    const { count } = await tx.ledgerEntry.deleteMany({ where });
    await tx.ledgerHour.deleteMany({ where });
    await tx.ledgerHourTotal.deleteMany({ where });
    await tx.ledgerCheckHour.deleteMany({ where });
    await tx.ledgerSpeed.deleteMany({ where });
    await tx.ledgerFlag.deleteMany({ where });
    await tx.balanceSnapshot.deleteMany({ where });
    await tx.ledgerSync.deleteMany({ where });
    return count;
  });
}
