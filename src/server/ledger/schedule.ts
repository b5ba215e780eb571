/**
 * When each account's ledger syncs (docs/design.md 18): every account has its own moment within the
 * interval, the same on every instance, so that accounts added together spread over it instead of
 * all syncing at the top of it.
 */
import { createHash } from "node:crypto";

/** The account's moment within every interval (ms after each multiple of it). */
function phaseOf(key: string, intervalMs: number): number {
  return createHash("sha256").update(key).digest().readUInt32BE(0) % intervalMs;
}

/** The account's last moment at or before `now`. */
function lastMoment(key: string, intervalMs: number, now: number): number {
  const phase = phaseOf(key, intervalMs);
  return now - ((((now - phase) % intervalMs) + intervalMs) % intervalMs);
}

/**
 * Whether an account last synced at `syncedAt` (0: never) is due: never synced, or its moment of
 * the interval has come since its last sync and half an interval has passed since it. An account
 * first synced at any time reaches its moment within one interval (one gap of at least half an
 * interval on the way) and then syncs every interval; one whose sync was held up (its site's
 * budget) is never made to skip a moment for it.
 */
export function syncDue(key: string, syncedAt: number, intervalMs: number, now: number): boolean {
  if (syncedAt === 0) return true;
  return syncedAt < lastMoment(key, intervalMs, now) && now - syncedAt >= intervalMs / 2;
}

/** When the account is next due (now when it is due already). */
export function nextSync(key: string, syncedAt: number, intervalMs: number, now: number): number {
  if (syncDue(key, syncedAt, intervalMs, now)) return now;
  const last = lastMoment(key, intervalMs, now);
  // Its moment came since the last sync, but half an interval has not passed yet; or the next
  // moment, and not before half an interval after the last sync.
  if (syncedAt < last) return syncedAt + intervalMs / 2;
  return Math.max(last + intervalMs, syncedAt + intervalMs / 2);
}
