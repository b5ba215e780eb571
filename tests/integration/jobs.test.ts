import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, createDb } from "../../src/server/db/client";
import { jobLeases, releaseHeldJobLeases, runLeased } from "../../src/server/jobs/leases";
import { ledgerRunnerKept, lookWhileBehind, syncDueLedgers } from "../../src/server/jobs/ledger";
import { ledgerDue } from "../../src/server/session/due";
import { sealAccessToken, sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempStore, type TempDb } from "../support/db";
import { freePort } from "../support/server";

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
    // The job has begun (its claim's answer read, the lease noted as held), however loaded the store.
    let begun: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (begun = resolve));
    const running = runLeased(store.db, "alerts:3", { leaseMs: 60_000 }, () => {
      begun();
      return held;
    });
    await started;
    expect(await jobLeases(store.db).claim("alerts:3", "other", { leaseMs: 60_000 })).toBe(false);
    expect(await releaseHeldJobLeases(store.db)).toBe(1);
    expect(await jobLeases(store.db).claim("alerts:3", "other", { leaseMs: 60_000 })).toBe(true);
    release();
    await running;
    // The stopped run's own release touches nothing it no longer holds.
    expect(await jobLeases(store.db).renew("alerts:3", "other", 60_000)).toBe(true);
  });
});

describe("the runner's due accounts", () => {
  it("two instances claiming at once never take one account twice; a claim holds until it runs out", async () => {
    const other = secondInstance();
    try {
      const t0 = Date.now();
      await store.db.ledgerDue.createMany({
        data: Array.from({ length: 300 }, (_, i) => ({
          siteId: 900,
          siteUserId: BigInt(i + 1),
          dueAt: new Date(t0 - 60_000 + i),
        })),
      });
      const hold = new Date(t0 + 30_000);
      const claims = await Promise.all(
        Array.from({ length: 6 }, (_, i) => ledgerDue(i % 2 ? other : store.db).claim(50, new Date(t0), hold)),
      );
      const ids = claims.flat().map((a) => a.siteUserId);
      expect(claims.every((c) => c.length === 50)).toBe(true);
      expect(new Set(ids).size).toBe(300);
      // Held: nothing is due again before the hold ends; after it, every one is.
      expect(await ledgerDue(store.db).claim(50, new Date(t0 + 29_000), new Date(t0 + 60_000))).toEqual([]);
      const again = await ledgerDue(other).claim(500, new Date(t0 + 31_000), new Date(t0 + 90_000));
      expect(again).toHaveLength(300);
    } finally {
      await closeSecond(other);
      await store.db.ledgerDue.deleteMany({ where: { siteId: 900 } });
    }
  });

  it("a pass claims a bounded batch, one row per account however many sessions it has, and parks accounts no one is signed in to", async () => {
    // A site nobody answers at: each sync fails at once.
    const { id: siteId, url } = await siteRegistry(store.db).add({
      name: "无人应答",
      url: `http://127.0.0.1:${await freePort()}`,
    });
    const sessions = sessionStore(store.db);
    const sealed = await sealAccessToken("due-test-access-token");
    const signIn = (siteUserId: number) =>
      sessions.create({
        userId: siteUserId,
        siteUserId,
        sealedAccessToken: sealed,
        siteId,
        siteUrl: url,
        userInfo: { id: siteUserId, username: `u${siteUserId}` },
        credential: `fingerprint-${siteUserId}`,
      });
    // 40 accounts, each signed in three times; 10 more whose sessions are gone.
    for (let u = 1; u <= 50; u++) for (let k = 0; k < (u <= 40 ? 3 : 1); k++) await signIn(u);
    await store.db.session.deleteMany({ where: { siteId, siteUserId: { gt: 40 } } });
    expect(await store.db.ledgerDue.count({ where: { siteId } })).toBe(50);
    const opts = { syncMinutes: 10, keepDays: 400, backfillDays: 5, perMinute: 100_000, timeoutMs: 2000 };
    const t0 = Date.now() + 1000;
    // Passes a look apart: each claims at most 8 accounts of one site (the rest go back for the next look).
    const passes = async (from: number, n: number) => {
      const started: number[] = [];
      for (let pass = 0; pass < n; pass++) started.push(await syncDueLedgers(store.db, opts, from + pass * 16_000));
      return started;
    };
    const first = await passes(t0, 8);
    // Once a pass's syncs ended, the runner keeps nothing of them (no limiter of their site).
    expect(ledgerRunnerKept()).toEqual({ syncs: 0, sites: 0 });
    expect(Math.max(...first)).toBe(8);
    expect(first.reduce((a, b) => a + b)).toBe(40);
    const parked = await store.db.ledgerDue.findMany({
      where: { siteId, dueAt: null },
      select: { siteUserId: true },
      orderBy: { siteUserId: "asc" },
    });
    expect(parked.map((p) => Number(p.siteUserId))).toEqual([41, 42, 43, 44, 45, 46, 47, 48, 49, 50]);
    // Each failed once and waits twice the interval; the parked ones are not looked at again.
    expect(await passes(t0 + 15 * 60_000, 3)).toEqual([0, 0, 0]);
    expect((await passes(t0 + 23 * 60_000, 8)).reduce((a, b) => a + b)).toBe(40);
    // A sign-in makes a parked account due again.
    await signIn(45);
    expect(await syncDueLedgers(store.db, opts, t0 + 26 * 60_000)).toBe(1);
  }, 60_000);

  it("looks again as soon as half its places are free while more is due than a look could take, not a tick later", async () => {
    // 200 accounts over 50 sites nobody answers at (each sync fails at once): more than the 64
    // places of a look, and no site over its share of them.
    const sealed = await sealAccessToken("due-test-access-token");
    const siteIds: number[] = [];
    const port = await freePort();
    for (let s = 0; s < 50; s++) {
      const site = await siteRegistry(store.db).add({ name: `空站 ${s}`, url: `http://127.0.0.1:${port}/s/${s}` });
      siteIds.push(site.id);
      for (let u = 1; u <= 4; u++) {
        await sessionStore(store.db).create({
          userId: u,
          siteUserId: u,
          sealedAccessToken: sealed,
          siteId: site.id,
          siteUrl: site.url,
          userInfo: { id: u, username: `u${u}` },
          credential: `behind-${s}-${u}`,
        });
      }
    }
    const opts = { syncMinutes: 10, keepDays: 400, backfillDays: 5, perMinute: 100_000, timeoutMs: 2000 };
    const tried = () => store.db.ledgerDue.count({ where: { failures: { gt: 0 }, siteId: { in: siteIds } } });
    const t = Date.now();
    // One tick's looks: it returns once a look found fewer due than its places.
    await lookWhileBehind(store.db, opts, new AbortController().signal, 15_000);
    const tick = Date.now() - t;
    for (let i = 0; i < 100 && (await tried()) < 200; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await tried()).toBe(200);
    // Four looks or so, each a second after the last: well within the 15 s before the next tick.
    expect(tick).toBeLessThan(10_000);
  }, 60_000);
});
