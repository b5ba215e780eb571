/**
 * Where the ledgers' syncs stand, as the background jobs, a workspace's rows, /admin and 用量's
 * status read it: when each last synced, its last error, whether one runs now, how far it got.
 */
import type { Db } from "../db/client";
import type { Account } from "../site-data/site-data";
import type { LedgerStatus } from "./schemas";
import { ownerWhere } from "./store";
import { owner } from "./sync-leases";

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

/**
 * Where the account's ledger stands. `until`: the reader no longer holds the account (docs/design.md
 * 24); it is told what the ledger held of it up to then, and nothing of the syncs since.
 */
export async function ledgerStatus(db: Db, account: Account, until?: number): Promise<LedgerStatus> {
  if (until !== undefined) return heldStatus(db, account, until);
  const [state, entries] = await Promise.all([
    db.ledgerSync.findUnique({
      where: { siteId_siteUserId: owner(account) },
      select: {
        holder: true,
        leaseUntil: true,
        oldest: true,
        newest: true,
        windowFrom: true,
        windowTo: true,
        cursor: true,
        syncedAt: true,
        lastError: true,
        skipped: true,
        skipReason: true,
      },
    }),
    db.ledgerEntry.count({ where: owner(account) }),
  ]);
  const iso = (s: number | null | undefined) =>
    s === null || s === undefined ? null : new Date(s * 1000).toISOString();
  const running = !!state?.holder && !!state.leaseUntil && state.leaseUntil.getTime() > Date.now();
  const span = state?.windowTo != null && state.windowFrom != null ? state.windowTo - state.windowFrom : 0;
  return {
    running,
    entries,
    oldest: iso(state?.oldest),
    newest: iso(state?.newest),
    syncedAt: state?.syncedAt?.toISOString() ?? null,
    progress:
      running && state?.cursor != null && span > 0 ? Math.min(1, ((state.windowTo ?? 0) - state.cursor) / span) : null,
    lastError: state?.lastError ?? null,
    skipped: { count: state?.skipped ?? 0, reason: state?.skipReason ?? null },
  };
}

async function heldStatus(db: Db, account: Account, until: number): Promise<LedgerStatus> {
  const where = ownerWhere({ siteId: account.siteId, siteUserId: account.siteUserId, until });
  const [entries, first, last] = await Promise.all([
    db.ledgerEntry.count({ where }),
    db.ledgerEntry.findFirst({ where, orderBy: { at: "asc" }, select: { at: true } }),
    db.ledgerEntry.findFirst({ where, orderBy: { at: "desc" }, select: { at: true } }),
  ]);
  const iso = (s: number | undefined) => (s === undefined ? null : new Date(s * 1000).toISOString());
  return {
    running: false,
    entries,
    oldest: iso(first?.at),
    newest: iso(last?.at),
    syncedAt: null,
    progress: null,
    lastError: null,
    skipped: { count: 0, reason: null },
  };
}
