import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import { hotPath } from "../db/hot-path";
import { addressBucket } from "../net/client-address";
import { accountOf } from "./login-input";

const WINDOW_MS = 60_000;

type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Counter keys are hashes: bounded in length whatever a client sends. */
function counterKey(kind: string, value: string): string {
  return createHash("sha256").update(`${kind}:${value}`).digest("hex");
}

/**
 * Fixed one-minute windows counted in the store, so every instance sharing it sees the same counts.
 *
 * - Every attempt is charged to its client address (IPv6: its /64); past the budget, refused, and
 *   nothing else is charged.
 * - An account (site and Number(userId)) is charged once per address that tries it in the window:
 *   past the budget, new addresses are refused. One address, however busy, therefore counts once
 *   and cannot lock the account out for sign-ins from elsewhere, while many addresses trying one
 *   account are held back.
 */
export function loginRateLimiter(db: Db, perMinute: number) {
  return {
    async hit(clientAddress: string | null, body: unknown, now = Date.now()): Promise<RateDecision> {
      if (perMinute <= 0) return { allowed: true };
      const start = now - (now % WINDOW_MS);
      const window = new Date(start);
      const refused: RateDecision = {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)),
      };
      const store = hotPath(db);
      const address = clientAddress === null ? "unknown" : addressBucket(clientAddress);
      if ((await store.chargeAttempt(counterKey("address", address), window)) > perMinute) return refused;
      const account = accountOf(body);
      if (!account) return { allowed: true };
      const name = `${account.siteId}:${account.siteUserId}`;
      const pair = `${name}@${address}`;
      if ((await store.chargeAttempt(counterKey("pair", pair), window)) > 1) {
        // An address seen before keeps the answer it got the first time in this window.
        return (await store.attemptCount(counterKey("denied", pair), window)) > 0 ? refused : { allowed: true };
      }
      if ((await store.chargeAttempt(counterKey("account", name), window)) <= perMinute) return { allowed: true };
      await store.chargeAttempt(counterKey("denied", pair), window);
      return refused;
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
