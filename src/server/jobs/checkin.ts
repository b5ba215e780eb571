/**
 * 自动签到 (docs/design.md 20): every saved account opted in is checked in once a day of its site,
 * at its own moment of that day (spread over 00:30–20:30 by the account, the same every day), by
 * one instance of the deployment at a time. Veloera counts UTC days; new-api its server's, read
 * as UTC+8 as most run (its status says whether today's is done, so a different zone costs at
 * most a day's wait, never a double check-in). A site that wants a human check is settled as
 * 需手动签到 until the next day; one that cannot be reached is tried again an hour later, three
 * times a day at most. The outcome is kept on the account and in its 操作记录.
 */
import pLimit from "p-limit";
import { checkin, siteDay } from "../actions/checkin";
import type { Actor } from "../actions/records";
import { env } from "../core/env";
import { logEvent } from "../core/log";
import { backgroundDb, type Db } from "../db/client";
import type { Family } from "../gateway/families";
import { SiteDataError, type Account } from "../site-data/calls";
import { freshProfile } from "../sites/probe";
import { checkinCandidates, checkinLater, noteCheckin, type CheckinCandidate } from "../workspace/background";
import { runLeased } from "./leases";
import { startJob } from "./registry";

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const CHECKIN_RETRY_MS = HOUR_MS;
export const CHECKIN_MAX_TRIES = 3;
const PER_TICK = 40;
const AT_ONCE = 4;

/** When in its site's day an account is checked in: between 00:30 and 20:30, by its id, the same each day. */
export function checkinMoment(accountId: number): number {
  const minute = (Math.imul(accountId, 2_654_435_761) >>> 0) % (20 * 60);
  return 30 * 60_000 + minute * 60_000;
}

/** Whether the account is due now: its moment of the site's day has come, and today's is not settled. */
function isDue(c: CheckinCandidate, family: Family | null, now: number): boolean {
  const { day, start } = siteDay(family, now);
  if (now < start + checkinMoment(c.id)) return false;
  if (c.checkinDay !== day) return true;
  // Today's failed try is repeated an hour later, three tries at most; any other outcome settles the day.
  return (
    c.checkinState === "failed" &&
    c.checkinTries < CHECKIN_MAX_TRIES &&
    (c.checkinAt?.getTime() ?? 0) + CHECKIN_RETRY_MS <= now
  );
}

/**
 * When the account is next due (now when it is due): its moment of today when it has not come and
 * today is not settled; a failed try's retry; else its moment of the next site day.
 */
function nextCheckin(c: CheckinCandidate, family: Family | null, now: number): number {
  if (isDue(c, family, now)) return now;
  const { day, start } = siteDay(family, now);
  const moment = start + checkinMoment(c.id);
  if (c.checkinDay !== day && now < moment) return moment;
  if (c.checkinDay === day && c.checkinState === "failed" && c.checkinTries < CHECKIN_MAX_TRIES) {
    return (c.checkinAt?.getTime() ?? 0) + CHECKIN_RETRY_MS;
  }
  return moment + DAY_MS;
}

export type CheckinJobOptions = { timeoutMs: number; perMinute: number };

/** Checks in the opted-in accounts that are due; returns how many were tried. */
export async function runAutoCheckins(db: Db, opts: CheckinJobOptions, now = Date.now()): Promise<number> {
  // The accounts whose next look has come (an indexed time), a bounded batch.
  const candidates = await checkinCandidates(db, new Date(now), PER_TICK);
  // The family decides the site's day: each site's profile as the probe knows it (probed once an hour).
  const deps = { db, timeoutMs: opts.timeoutMs, perMinute: opts.perMinute, background: true };
  const siteIds = [...new Set(candidates.map((c) => c.siteId))];
  const profiles = await Promise.all(siteIds.map((id) => freshProfile(db, id, deps)));
  const familyOf = new Map(profiles.flatMap((p) => (p ? [[p.id, p.family] as const] : [])));
  const due: CheckinCandidate[] = [];
  for (const c of candidates) {
    // A site not known now (gone, or not probed yet) is looked at again in an hour.
    if (!familyOf.has(c.siteId)) await checkinLater(db, c.id, new Date(now + HOUR_MS));
    else if (isDue(c, familyOf.get(c.siteId) ?? null, now)) due.push(c);
    else await checkinLater(db, c.id, new Date(nextCheckin(c, familyOf.get(c.siteId) ?? null, now)));
  }
  const limit = pLimit(AT_ONCE);
  await Promise.all(
    due.map((c) =>
      limit(async () => {
        const { day } = siteDay(familyOf.get(c.siteId) ?? null, now);
        const account: Account = {
          sessionId: c.sessionId ?? "",
          siteId: c.siteId,
          siteUrl: c.siteUrl,
          siteUserId: Number(c.siteUserId),
          userId: JSON.parse(c.userId) as number | string,
        };
        const actor: Actor = {
          siteId: c.siteId,
          siteUserId: Number(c.siteUserId),
          workspaceId: c.workspaceId,
          device: "自动签到",
        };
        let state: string;
        let message: string;
        try {
          const result = await checkin(db, account, actor, deps);
          state = result.state;
          message = result.message;
        } catch (error) {
          if (!(error instanceof SiteDataError)) throw error;
          state = "failed";
          message = error.message;
        }
        const tries = state === "failed" ? (c.checkinDay === day ? c.checkinTries : 0) + 1 : 0;
        const settled = { ...c, checkinDay: day, checkinState: state, checkinAt: new Date(now), checkinTries: tries };
        const next = new Date(nextCheckin(settled, familyOf.get(c.siteId) ?? null, now + 1));
        await noteCheckin(db, c.id, { day, state, message, at: new Date(now), tries, next });
      }),
    ),
  );
  if (due.length > 0) logEvent("workspace.checkins", { due: due.length });
  return due.length;
}

export function startCheckinJob(): void {
  const e = env();
  const opts = { timeoutMs: e.SITE_TIMEOUT_MS, perMinute: e.SITE_REQUESTS_PER_MINUTE };
  const tickMs = e.JOB_TICK_SECONDS * 1000;
  startJob("workspace.checkins", tickMs, async () => {
    const db = backgroundDb();
    // One instance at a time: an account is never checked in twice for one day.
    await runLeased(db, "workspace.checkins", { leaseMs: 5 * 60_000 }, async () => {
      await runAutoCheckins(db, opts);
    });
  });
}
