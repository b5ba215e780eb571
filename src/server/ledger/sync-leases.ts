/**
 * The ledger sync's lease (docs/design.md 13): one sync per account at a time across instances, a row
 * with an expiry renewed while the sync runs and checked in every commit. The leases this process
 * holds are let go of when it stops; those a store outage kept it from letting go of, once the
 * store is back (core/left-over.ts).
 */
import { leaveForLater } from "../core/left-over";
import { MSG } from "../core/messages";
import { processState, type StatePart } from "../core/process-state";
import type { Db } from "../db/client";
import type { Account } from "../site-data/site-data";

export const owner = (account: Account) => ({ siteId: account.siteId, siteUserId: BigInt(account.siteUserId) });

export class LedgerBusy extends Error {}

/** The ledger leases this process holds now (holder → account), let go of when it stops. */
const HELD: StatePart<Map<string, Account>> = { name: "ledger-leases", create: () => new Map() };

const letGo = (db: Db, holder: string, account: Account) =>
  db.ledgerSync.updateMany({ where: { ...owner(account), holder }, data: { holder: null, leaseUntil: null } });

export async function lease(db: Db, account: Account, holder: string, leaseMs: number): Promise<void> {
  const now = new Date();
  try {
    await db.ledgerSync.upsert({
      where: { siteId_siteUserId: owner(account) },
      create: owner(account),
      update: {},
      select: { siteId: true },
    });
  } catch (error) {
    // Two first syncs at once: the other one created the row (a unique violation here); the
    // conditional update below decides which of them holds the lease.
    if ((error as { code?: string }).code !== "P2002") throw error;
  }
  const { count } = await db.ledgerSync.updateMany({
    where: { ...owner(account), OR: [{ holder: null }, { leaseUntil: null }, { leaseUntil: { lt: now } }] },
    data: { holder, leaseUntil: new Date(now.getTime() + leaseMs) },
  });
  if (count === 0) throw new LedgerBusy(MSG.syncRunning);
  processState().get(HELD).set(holder, account);
}

/** The sync ended: its lease is let go of (later, when the store cannot be reached now). */
export async function letGoOf(db: Db, holder: string, account: Account): Promise<void> {
  processState().get(HELD).delete(holder);
  await letGo(db, holder, account).catch(() => leaveForLater(`ledger:${holder}`, () => letGo(db, holder, account)));
}

export async function progress(
  sync: { db: Db; account: Account; holder: string; leaseMs: number },
  data: Record<string, unknown>,
) {
  const { count } = await sync.db.ledgerSync.updateMany({
    where: { ...owner(sync.account), holder: sync.holder },
    data: { ...data, leaseUntil: new Date(Date.now() + sync.leaseMs) },
  });
  if (count === 0) throw new LedgerBusy(MSG.syncLeaseLost);
}

/** Lets go of every ledger lease this process holds (it is stopping); returns how many. */
export async function releaseHeldLedgerLeases(db: Db): Promise<number> {
  const held = processState().get(HELD);
  const all = [...held];
  held.clear();
  await Promise.all(all.map(([holder, account]) => letGo(db, holder, account)));
  return all.length;
}
