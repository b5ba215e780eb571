import { createHash } from "node:crypto";
import type { Db } from "../db/client";
import { hotPath } from "../db/hot-path";
import { addressBucket } from "../net/client-address";
import { signInAccountOf } from "./login-input";

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
    /** A sign-in of the contract: the account is the site and user its body names. */
    hit(clientAddress: string | null, body: unknown, now = Date.now()): Promise<RateDecision> {
      const account = signInAccountOf(body);
      return charge(db, perMinute, "", clientAddress, account && `${account.siteId}:${account.siteUserId}`, now);
    },
    /** A sign-in to something else named `name` (a workspace), counted apart from the accounts' under `scope`. */
    hitNamed(
      scope: string,
      clientAddress: string | null,
      name: string | null,
      now = Date.now(),
    ): Promise<RateDecision> {
      return charge(db, perMinute, `${scope}-`, clientAddress, name, now);
    },
  };
}

async function charge(
  db: Db,
  perMinute: number,
  scope: string,
  clientAddress: string | null,
  name: string | null,
  now: number,
): Promise<RateDecision> {
  if (perMinute <= 0) return { allowed: true };
  const start = now - (now % WINDOW_MS);
  const window = new Date(start);
  const refused: RateDecision = {
    allowed: false,
    retryAfterSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)),
  };
  const store = hotPath(db);
  const key = (kind: string, value: string) => counterKey(`${scope}${kind}`, value);
  const address = clientAddress === null ? "unknown" : addressBucket(clientAddress);
  if ((await store.chargeAttempt(key("address", address), window)) > perMinute) return refused;
  if (name === null) return { allowed: true };
  const pair = `${name}@${address}`;
  if ((await store.chargeAttempt(key("pair", pair), window)) > 1) {
    // An address seen before keeps the answer it got the first time in this window.
    return (await store.attemptCount(key("denied", pair), window)) > 0 ? refused : { allowed: true };
  }
  if ((await store.chargeAttempt(key("account", name), window)) <= perMinute) return { allowed: true };
  await store.chargeAttempt(key("denied", pair), window);
  return refused;
}

/**
 * One counter of something else than sign-ins (a workspace's channel tests): `perMinute` hits of
 * `key` in a fixed one-minute window, counted in the store like the sign-ins (every instance shares it).
 */
export async function hitPerMinute(db: Db, key: string, perMinute: number, now = Date.now()): Promise<RateDecision> {
  const start = now - (now % WINDOW_MS);
  const count = await hotPath(db).chargeAttempt(counterKey("counter", key), new Date(start));
  if (count <= perMinute) return { allowed: true };
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)) };
}

/** Deletes the counters of finished windows; returns how many went. */
export async function purgeLoginAttempts(db: Db, now = Date.now()): Promise<number> {
  const { count } = await db.loginAttempt.deleteMany({
    where: { windowStart: { lt: new Date(now - (now % WINDOW_MS) - WINDOW_MS) } },
  });
  return count;
}
