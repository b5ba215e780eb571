import type { Db } from "../db/client";
import { hotPath } from "../db/hot-path";
import { isPlainObject, presentFields } from "./login";

const WINDOW_MS = 60_000;

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Fixed one-minute windows counted in the store, so every instance sharing it sees the same
 * counts. Each key is charged once per attempt (one atomic upsert each); an attempt over budget on
 * any key is refused.
 */
export function loginRateLimiter(db: Db, perMinute: number) {
  return {
    async hit(keys: string[], now = Date.now()): Promise<RateDecision> {
      if (perMinute <= 0) return { allowed: true };
      const start = now - (now % WINDOW_MS);
      const counts = await hotPath(db).chargeAttempts(keys, new Date(start));
      if (counts.every((n) => n <= perMinute)) return { allowed: true };
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)) };
    },
  };
}

/** Deletes the counters of finished windows; returns how many went. */
export async function purgeLoginAttempts(db: Db, now = Date.now()): Promise<number> {
  const { count } = await db.loginAttempt.deleteMany({
    where: { windowStart: { lt: new Date(now - (now % WINDOW_MS) - WINDOW_MS) } },
  });
  return count;
}

/** Keys an attempt is charged to: the client address, and the site + user id it names. */
export function attemptKeys(clientAddress: string | null, body: unknown): string[] {
  const keys = [`ip:${clientAddress ?? "unknown"}`];
  const { userId, siteId } = isPlainObject(body) ? presentFields(body) : {};
  if (userId !== undefined && siteId !== undefined) {
    keys.push(`user:${String(siteId).trim()}:${String(userId).trim().toLowerCase()}`);
  }
  return keys;
}
