/**
 * When each account's ledger syncs (design.md 18): every account has its own moment within the
 * interval, the same on every instance, so that accounts added together spread over it instead of
 * all syncing at the top of it.
 */
import { createHash } from "node:crypto";

/** The account's moment within every interval (ms after each multiple of it). */
export function phaseOf(key: string, intervalMs: number): number {
  return createHash("sha256").update(key).digest().readUInt32BE(0) % intervalMs;
}

/** The account's last moment at or before `now`. */
function lastMoment(key: string, intervalMs: number, now: number): number {
  const phase = phaseOf(key, intervalMs);
  return now - ((((now - phase) % intervalMs) + intervalMs) % intervalMs);
}

/**
 * Whether an account last synced at `syncedAt` (0: never) is due: never synced, or its moment of
 * the interval has come since its last sync, at least half an interval after it (an account synced
 * just before its moment waits for the next one: it moves to its moment once, by at most half an
 * interval more, and then syncs every interval).
 */
export function syncDue(key: string, syncedAt: number, intervalMs: number, now: number): boolean {
  if (syncedAt === 0) return true;
  return lastMoment(key, intervalMs, now) - syncedAt >= intervalMs / 2;
}

/** When the account is next due (now when it is due already). */
export function nextSync(key: string, syncedAt: number, intervalMs: number, now: number): number {
  if (syncDue(key, syncedAt, intervalMs, now)) return now;
  let next = lastMoment(key, intervalMs, now) + intervalMs;
  while (next - syncedAt < intervalMs / 2) next += intervalMs;
  return next;
}
