import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, createDb } from "../../src/server/db/client";
import { jobLeases, releaseHeldJobLeases, runLeased } from "../../src/server/jobs/leases";
import { tempStore, type TempDb } from "../support/db";

/**
 * The job leases on a real store; on PostgreSQL a second client plays a second instance (a SQLite
 * deployment is one process: its claims race inside one client).
 */
let store: TempDb;
const secondInstance = () => (store.kind === "postgres" ? createDb(store.url) : store.db);
const closeSecond = (db: TempDb["db"]) => (db === store.db ? Promise.resolve() : closeDb(db));
beforeAll(async () => {
  store = await tempStore();
});
afterAll(async () => {
  await store?.cleanup();
});

describe("job leases", () => {
  it("one holder at a time across instances; a dead holder's lease is taken after it ends", async () => {
    const other = secondInstance();
    try {
      const opts = { leaseMs: 60_000 };
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) => jobLeases(i % 2 ? other : store.db).claim("checkin:7", `h${i}`, opts)),
      );
      expect(claims.filter(Boolean)).toHaveLength(1);
      const winner = `h${claims.indexOf(true)}`;
      expect(await jobLeases(other).renew("checkin:7", winner, 60_000)).toBe(true);
      expect(await jobLeases(other).renew("checkin:7", "someone", 60_000)).toBe(false);
      // The holder dies: its lease ends, and another instance takes the job.
      const later = new Date(Date.now() + 61_000);
      expect(await jobLeases(other).claim("checkin:7", "heir", opts, later)).toBe(true);
      expect(await jobLeases(store.db).renew("checkin:7", winner, 60_000)).toBe(false);
    } finally {
      await closeSecond(other);
    }
  });

  it("runs a periodic job once per period however many instances look, and again after a failed run", async () => {
    const other = secondInstance();
    try {
      let runs = 0;
      const job = (db: typeof store.db) =>
        runLeased(db, "ledger.prune.test", { leaseMs: 30_000, everyMs: 3_600_000 }, async () => {
          runs++;
          await new Promise((r) => setTimeout(r, 50));
        });
      const ran = await Promise.all([job(store.db), job(other), job(store.db), job(other)]);
      expect([ran.filter(Boolean).length, runs]).toEqual([1, 1]);
      expect(await job(other)).toBe(false);

      // A run that throws is not a finished run: the next look tries again.
      const failing = () =>
        runLeased(store.db, "digest.test", { leaseMs: 30_000, everyMs: 3_600_000 }, () =>
          Promise.reject(new Error("x")),
        );
      await expect(failing()).rejects.toThrow("x");
      let retried = false;
      await runLeased(other, "digest.test", { leaseMs: 30_000, everyMs: 3_600_000 }, () => {
        retried = true;
        return Promise.resolve();
      });
      expect(retried).toBe(true);
    } finally {
      await closeSecond(other);
    }
  });

  it("a stopping process lets go of the leases it holds", async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const running = runLeased(store.db, "alerts:3", { leaseMs: 60_000 }, () => held);
    await new Promise((r) => setTimeout(r, 100));
    expect(await jobLeases(store.db).claim("alerts:3", "other", { leaseMs: 60_000 })).toBe(false);
    expect(await releaseHeldJobLeases(store.db)).toBe(1);
    expect(await jobLeases(store.db).claim("alerts:3", "other", { leaseMs: 60_000 })).toBe(true);
    release();
    await running;
    // The stopped run's own release touches nothing it no longer holds.
    expect(await jobLeases(store.db).renew("alerts:3", "other", 60_000)).toBe(true);
  });
});
