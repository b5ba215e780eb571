/**
 * What the automatic check-in keeps on a saved account (design.md 20): the accounts opted in, and
 * the outcome of each day's try. The job runner (jobs/checkin.ts) decides when and tries.
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

/** The saved accounts opted in whose saved token works now (a live session to act with). */
export function checkinCandidates(db: Db): Promise<CheckinCandidate[]> {
  return db.workspaceAccount.findMany({
    where: { autoCheckin: true, state: "ok", sessionId: { not: null } },
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
    orderBy: { id: "asc" },
  });
}

/** Keeps a day's outcome on the account (failed tries counted for the retries of that day). */
export async function noteCheckin(
  db: Db,
  id: number,
  outcome: { day: string; state: string; message: string; at: Date; tries: number },
): Promise<void> {
  await db.workspaceAccount.updateMany({
    where: { id },
    data: {
      checkinDay: outcome.day,
      checkinState: outcome.state,
      checkinMessage: outcome.message.slice(0, 500),
      checkinAt: outcome.at,
      checkinTries: outcome.tries,
    },
  });
}
