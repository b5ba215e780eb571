/**
 * What the background jobs read and keep of the saved accounts: the accounts opted in to the
 * automatic check-in and each day's outcome (docs/design.md 20; jobs/checkin.ts decides when and
 * tries), and the accounts the price reads use.
 */
import type { Db } from "../db/client";

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

/**
 * A batch of the saved accounts whose saved token works now (the price reads use these), by id
 * above `after`, each site account once within the batch; `last` is the id to go on after (null:
 * none left).
 */
export async function workingAccounts(
  db: Db,
  after: number,
  limit: number,
): Promise<{
  accounts: Array<{ siteId: number; siteUrl: string; siteUserId: number; userId: number | string; sessionId: string }>;
  last: number | null;
}> {
  const rows = await db.workspaceAccount.findMany({
    where: { id: { gt: after }, state: "ok", sessionId: { not: null } },
    select: { id: true, siteId: true, siteUrl: true, siteUserId: true, userId: true, sessionId: true },
    orderBy: { id: "asc" },
    take: limit,
  });
  const seen = new Set<string>();
  const accounts = [];
  for (const r of rows) {
    const key = `${r.siteId}:${r.siteUserId}`;
    if (seen.has(key) || !r.sessionId) continue;
    seen.add(key);
    accounts.push({
      siteId: r.siteId,
      siteUrl: r.siteUrl,
      siteUserId: Number(r.siteUserId),
      userId: JSON.parse(r.userId) as number | string,
      sessionId: r.sessionId,
    });
  }
  return { accounts, last: rows.length < limit ? null : rows[rows.length - 1]!.id };
}
