import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { liveRequest } from "../../../src/server/core/live-load";
import { freshProcessState } from "../../../src/server/core/process-state";
import { closeDb, createBackgroundDb, type Db } from "../../../src/server/db/client";
import { driverOf } from "../../../src/server/db/driver";
import { tempPostgres, type TempDb } from "../../support/db";

// A stretch of live requests holds the background for its first 3 s here (10 s by default).
process.env.LIVE_FIRST_SECONDS = "3";

/**
 * The background's pool in a stretch's first seconds (db/client.ts): a new statement waits, through
 * Prisma and through the pool's own query alike; a transaction already begun goes on; the pool of
 * live requests never waits.
 */

let store: TempDb;
let background: Db;

beforeAll(async () => {
  store = await tempPostgres();
  background = createBackgroundDb(store.url, 2);
});
afterAll(async () => {
  if (background) await closeDb(background);
  await store?.cleanup();
});
beforeEach(() => freshProcessState());

/** When `p` settled, ms after `from` (null: still waiting after `ms`). */
const settledAfter = (p: Promise<unknown>, from: number, ms: number) =>
  Promise.race([p.then(() => performance.now() - from), new Promise<null>((r) => setTimeout(() => r(null), ms))]);

describe("the background's pool beside live requests", () => {
  it("sends no new statement in a stretch's first seconds, and all of them once they are over", async () => {
    const answered = liveRequest();
    try {
      const t = performance.now();
      const viaPrisma = background.site.count();
      const driver = driverOf(background);
      if (driver.kind !== "postgres") throw new Error("a PostgreSQL store");
      const viaPool = driver.pool.query("SELECT 1 AS one");
      const live = store.db.site.count();
      // The live request's pool answers at once.
      expect(await settledAfter(live, t, 500)).not.toBeNull();
      expect(await settledAfter(viaPrisma, t, 500)).toBeNull();
      // After the first seconds, both go.
      expect(await settledAfter(viaPrisma, t, 4_000)).toBeGreaterThanOrEqual(2_950);
      expect(await settledAfter(viaPool, t, 4_000)).toBeGreaterThanOrEqual(2_950);
      // Past the stretch's first seconds, nothing is held.
      const s = performance.now();
      expect(await settledAfter(background.site.count(), s, 300)).not.toBeNull();
    } finally {
      answered();
    }
  });

  it("lets a transaction begun before the stretch finish in it; a new one waits", async () => {
    let go!: () => void;
    const begun = new Promise<void>((r) => (go = r));
    let inside!: () => void;
    const started = new Promise<void>((r) => (inside = r));
    const tx = background.$transaction(async (t) => {
      await t.$queryRawUnsafe("SELECT 1");
      inside();
      await begun;
      // Sent while held: it runs on the transaction's own connection.
      return t.site.count();
    });
    await started;
    const answered = liveRequest();
    try {
      const t = performance.now();
      go();
      expect(await settledAfter(tx, t, 500)).not.toBeNull();
      const next = background.$transaction(async (n) => n.site.count());
      expect(await settledAfter(next, t, 500)).toBeNull();
      // Held 3 s, longer than Prisma waits for a transaction's connection (2 s): it still runs.
      expect(await next).toBe(0);
    } finally {
      answered();
    }
  });

  it("goes on at once when live requests stop, held or not", async () => {
    const answered = liveRequest();
    const t = performance.now();
    const held = background.site.count();
    answered();
    // Quiet a second after the last live request: the wait ends then, not at the end of the 3 s.
    const after = await settledAfter(held, t, 2_500);
    expect(after).toBeGreaterThanOrEqual(950);
    expect(await settledAfter(background.site.count(), performance.now(), 300)).not.toBeNull();
  });
});
