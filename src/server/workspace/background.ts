/**
 * What the background jobs read and keep of the saved accounts: the accounts opted in to the
 * automatic check-in and each day's outcome (docs/design.md 20; jobs/checkin.ts decides when and
 * tries), the accounts whose price read is due and the accounts to read a site's list with
 * (jobs/prices.ts).
 */
import type { Db } from "../db/client";
import { pgClaim } from "../db/claim";
import { driverOf } from "../db/driver";

export type CheckinCandidate = {
  id: number;
  workspaceId: number;
  siteId: number;
  siteUrl: string;
  siteUserId: bigint;
  userId: string;
  sessionId: string | null;
  checkinDay: string | null;
  checkinState: string | null;
  checkinAt: Date | null;
  checkinTries: number;
};

/**
 * The saved accounts opted in whose saved token works now (a live session to act with) and whose
 * next look has come, the earliest first, at most `limit`.
 */
export function checkinCandidates(db: Db, now: Date, limit: number): Promise<CheckinCandidate[]> {
  return db.workspaceAccount.findMany({
    where: { autoCheckin: true, checkinNext: { lte: now }, state: "ok", sessionId: { not: null } },
    orderBy: { checkinNext: "asc" },
    take: limit,
    select: {
      id: true,
      workspaceId: true,
      siteId: true,
      siteUrl: true,
      siteUserId: true,
      userId: true,
      sessionId: true,
      checkinDay: true,
      checkinState: true,
      checkinAt: true,
      checkinTries: true,
    },
  });
}

/** The account's 自动签到 is looked at next at `at`. */
export async function checkinLater(db: Db, id: number, at: Date): Promise<void> {
  await db.workspaceAccount.updateMany({ where: { id }, data: { checkinNext: at } });
}

/** Keeps a day's outcome on the account (failed tries counted for the retries of that day), and its next look. */
export async function noteCheckin(
  db: Db,
  id: number,
  outcome: { day: string; state: string; message: string; at: Date; tries: number; next: Date },
): Promise<void> {
  await db.workspaceAccount.updateMany({
    where: { id },
    data: {
      checkinDay: outcome.day,
      checkinState: outcome.state,
      checkinMessage: outcome.message.slice(0, 500),
      checkinAt: outcome.at,
      checkinTries: outcome.tries,
      checkinNext: outcome.next,
    },
  });
}

type ReadingAccount = {
  siteId: number;
  siteUrl: string;
  siteUserId: number;
  userId: number | string;
  sessionId: string;
};

const readingSelect = {
  id: true,
  siteId: true,
  siteUrl: true,
  siteUserId: true,
  userId: true,
  sessionId: true,
} as const;

const readingOf = (r: { siteId: number; siteUrl: string; siteUserId: bigint; userId: string }, sessionId: string) => ({
  siteId: r.siteId,
  siteUrl: r.siteUrl,
  siteUserId: Number(r.siteUserId),
  userId: JSON.parse(r.userId) as number | string,
  sessionId,
});

/** Claims the working accounts whose price read came (db/claim.ts). */
const PG_CLAIM_PRICES = pgClaim({
  table: "workspace_accounts",
  key: ["id"],
  due: "prices_next",
  where: `"state" = 'ok'`,
});

/**
 * Claims the working saved accounts (state ok) whose price read has come, the earliest first, at
 * most `limit` rows (an indexed due time: what a pass reads is what is due, however many accounts
 * the deployment holds), and holds them until `holdUntil`: every instance's pass claims its own
 * (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite has one process), and one that dies lets them
 * fall due again at the hold's end. `ids` are every row taken, to be set later with
 * `pricesLater`; `accounts` those with a live session to read with, each site account once.
 */
export async function claimPriceAccounts(
  db: Db,
  now: Date,
  limit: number,
  holdUntil: Date,
): Promise<{ ids: number[]; accounts: ReadingAccount[] }> {
  let ids: number[];
  if (driverOf(db).kind === "postgres") {
    const claimed = await db.$queryRawUnsafe<Array<{ id: number }>>(
      PG_CLAIM_PRICES,
      holdUntil.toISOString(),
      now.toISOString(),
      limit,
    );
    ids = claimed.map((r) => r.id);
  } else {
    ids = await db.$transaction(async (tx) => {
      const due = await tx.workspaceAccount.findMany({
        where: { state: "ok", pricesNext: { lte: now } },
        select: { id: true },
        orderBy: { pricesNext: "asc" },
        take: limit,
      });
      const taken = due.map((r) => r.id);
      if (taken.length > 0)
        await tx.workspaceAccount.updateMany({ where: { id: { in: taken } }, data: { pricesNext: holdUntil } });
      return taken;
    });
  }
  if (ids.length === 0) return { ids, accounts: [] };
  const rows = await db.workspaceAccount.findMany({
    where: { id: { in: ids } },
    select: readingSelect,
    orderBy: { id: "asc" },
  });
  const seen = new Set<string>();
  const accounts: ReadingAccount[] = [];
  for (const r of rows) {
    const key = `${r.siteId}:${r.siteUserId}`;
    if (seen.has(key) || !r.sessionId) continue;
    seen.add(key);
    accounts.push(readingOf(r, r.sessionId));
  }
  return { ids, accounts };
}

/** One working saved account with a live session on each of these sites (the oldest saved), to read its list with. */
export async function siteReaders(db: Db, siteIds: number[]): Promise<ReadingAccount[]> {
  if (siteIds.length === 0) return [];
  const firsts = await db.workspaceAccount.groupBy({
    by: ["siteId"],
    where: { siteId: { in: siteIds }, state: "ok", sessionId: { not: null } },
    _min: { id: true },
  });
  const ids = firsts.flatMap((f) => (f._min.id === null ? [] : [f._min.id]));
  const rows = await db.workspaceAccount.findMany({ where: { id: { in: ids } }, select: readingSelect });
  return rows.flatMap((r) => (r.sessionId ? [readingOf(r, r.sessionId)] : []));
}

/** These accounts' price reads come next at `at`. */
export async function pricesLater(db: Db, ids: number[], at: Date): Promise<void> {
  if (ids.length > 0) await db.workspaceAccount.updateMany({ where: { id: { in: ids } }, data: { pricesNext: at } });
}

/** The account's saved rows read their prices at the next pass (its group changed on the site). */
export async function pricesDueNow(db: Db, owner: { siteId: number; siteUserId: number }, now: Date): Promise<void> {
  await db.workspaceAccount.updateMany({
    where: { siteId: owner.siteId, siteUserId: BigInt(owner.siteUserId), state: "ok" },
    data: { pricesNext: now },
  });
}
