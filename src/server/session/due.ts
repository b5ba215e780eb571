/**
 * When each account's ledger is next due (docs/design.md 18): one row per account (`ledger_due`), made
 * at sign-in (store.ts: an account is synced only while it has a live session), with an indexed
 * due time. The runner claims the earliest due rows
 * in bounded batches (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so two instances never claim one
 * row; SQLite has one process), holding each a short while ahead: a holder that dies lets its
 * accounts fall due again within that hold. What the runner reads per pass is the batch, however
 * many accounts the deployment has.
 */
import type { Db } from "../db/client";
import { pgClaim } from "../db/claim";
import { driverOf } from "../db/driver";

/** An account due now, as claimed: its site account and how many of its syncs failed in a row. */
export type DueAccount = { siteId: number; siteUserId: number; failures: number };

type Key = { siteId: number; siteUserId: number };
const where = (k: Key) => ({ siteId: k.siteId, siteUserId: BigInt(k.siteUserId) });

const PG_CLAIM = pgClaim({ table: "ledger_due", key: ["site_id", "site_user_id"], due: "due_at", extra: ["failures"] });

export function ledgerDue(db: Db) {
  return {
    /**
     * Claims up to `n` accounts due at `now`, earliest first, and holds them until `holdUntil`
     * (no other pass takes them before, unless the hold is let go of or runs out).
     */
    async claim(n: number, now: Date, holdUntil: Date): Promise<DueAccount[]> {
      if (n <= 0) return [];
      if (driverOf(db).kind === "postgres") {
        const rows = await db.$queryRawUnsafe<Array<{ site_id: number; site_user_id: bigint; failures: number }>>(
          PG_CLAIM,
          holdUntil.toISOString(),
          now.toISOString(),
          n,
        );
        return rows.map((r) => ({ siteId: r.site_id, siteUserId: Number(r.site_user_id), failures: r.failures }));
      }
      // One process on a SQLite file: its transactions take turns, so two claims never meet.
      return db.$transaction(async (tx) => {
        const rows = await tx.ledgerDue.findMany({
          where: { dueAt: { lte: now } },
          orderBy: { dueAt: "asc" },
          take: n,
          select: { siteId: true, siteUserId: true, failures: true },
        });
        if (rows.length === 0) return [];
        await tx.ledgerDue.updateMany({
          where: { OR: rows.map((r) => ({ siteId: r.siteId, siteUserId: r.siteUserId })) },
          data: { dueAt: holdUntil },
        });
        return rows.map((r) => ({ siteId: r.siteId, siteUserId: Number(r.siteUserId), failures: r.failures }));
      });
    },

    /** Holds these accounts (this process's syncs under way) until `holdUntil`. */
    async hold(keys: Key[], holdUntil: Date): Promise<void> {
      if (keys.length === 0) return;
      await db.ledgerDue.updateMany({ where: { OR: keys.map(where) }, data: { dueAt: holdUntil } });
    },

    /**
     * The account is next due at `dueAt` (null: parked until its next sign-in), with `failures`
     * failed syncs in a row when given.
     */
    async next(key: Key, dueAt: Date | null, failures?: number): Promise<void> {
      await db.ledgerDue.updateMany({
        where: where(key),
        data: { dueAt, ...(failures === undefined ? {} : { failures }) },
      });
    },
  };
}
