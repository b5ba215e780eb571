import type { Db } from "../db/client";

const WINDOW_MS = 60_000;

export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/**
 * Fixed one-minute windows counted in the store, so every instance sharing it sees the same
 * counts. Each key is charged once per attempt; an attempt over budget on any key is refused.
 */
export function loginRateLimiter(db: Db, perMinute: number) {
  async function charge(key: string, windowStart: Date): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      try {
        const row = await db.loginAttempt.upsert({
          where: { key_windowStart: { key, windowStart } },
          create: { key, windowStart, count: 1 },
          update: { count: { increment: 1 } },
          select: { count: true },
        });
        return row.count;
      } catch (error) {
        // Two first attempts raced to create the row: the second now updates it.
        if (attempt < 2 && (error as { code?: string }).code === "P2002") continue;
        throw error;
      }
    }
  }

  return {
    async hit(keys: string[], now = Date.now()): Promise<RateDecision> {
      if (perMinute <= 0) return { allowed: true };
      const start = now - (now % WINDOW_MS);
      const windowStart = new Date(start);
      let over = false;
      for (const key of keys) {
        if ((await charge(key, windowStart)) > perMinute) over = true;
      }
      return over ? { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)) } : { allowed: true };
    },

    /** Deletes finished windows. */
    async purge(now = Date.now()): Promise<number> {
      const { count } = await db.loginAttempt.deleteMany({
        where: { windowStart: { lt: new Date(now - (now % WINDOW_MS) - WINDOW_MS) } },
      });
      return count;
    },
  };
}

/** Keys an attempt is charged to: the client address, and the site + user id it names. */
export function attemptKeys(clientAddress: string | null, body: unknown): string[] {
  const keys = [`ip:${clientAddress ?? "unknown"}`];
  if (typeof body === "object" && body !== null) {
    const { userId, siteId } = body as { userId?: unknown; siteId?: unknown };
    const okType = (v: unknown) => (typeof v === "number" || typeof v === "string") && Boolean(v);
    if (okType(userId) && okType(siteId)) {
      keys.push(`user:${String(siteId).trim()}:${String(userId).trim().toLowerCase()}`);
    }
  }
  return keys;
}
