import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { LedgerBusy, releaseHeldLedgerLeases, syncLedger } from "../../src/server/ledger/sync";
import { ledgerStatus } from "../../src/server/ledger/sync-status";
import { REFUSED } from "../../src/server/ledger/entries";
import { accountOf } from "../../src/server/accounts/overview";
import { freshProcessState } from "../../src/server/core/process-state";
import { liveRequest } from "../../src/server/core/live-load";
import { sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import type { StandInFamily, StandInLog } from "../../src/demo/gateway";
import { bearer, callerFor, signInWith } from "../support/caller";
import { type TempDb } from "../support/db";
import { FAMILY_LIST, freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";
import type { HistoryOptions } from "../../src/demo/history";
import { createDb, closeDb } from "../../src/server/db/client";
import { syncDueLedgers } from "../../src/server/jobs/ledger";
import { pruneLedgers } from "../../src/server/ledger/sync";

/**
 * The ledger against a stand-in whose log is a known truth: its sums equal the truth exactly after
 * one sync, after repeated syncs, with identical twins in one second, with entries written late for
 * past seconds, after the site purges entries, and after a sync that died halfway.
 */

let store: TempDb;
const open: FamilySite[] = [];
const DEPS = { timeoutMs: 5000, perMinute: 100_000 };
const NOW = Math.floor(Date.now() / 1000);

freshStorePerTest((s) => (store = s), open);

let fault: ((req: IncomingMessage, res: ServerResponse) => boolean) | null = null;

async function account(family: StandInFamily = "new-api", history: HistoryOptions = {}) {
  const site = await startFamilySite(
    family,
    0,
    { intercept: (req, res) => fault?.(req, res) ?? false },
    { days: 40, now: NOW - 60, ...history },
  );
  open.push(site);
  const { id } = await siteRegistry(store.db).add({ name: family, url: site.gateway.url });
  const { token } = await signInWith(store.db, id, site.user);
  const session = (await sessionStore(store.db).findValid(token))!;
  const acct = accountOf(session);
  const sync = () => syncLedger(store.db, acct, { db: store.db, ...DEPS }, { backfillDays: 40, now: NOW });
  return { site, acct, token, sync, logs: site.history.logs };
}

const twin = (l: StandInLog): StandInLog => ({ ...l });

/**
 * The ledger's view: entries, the sum of quota and prompt tokens; the hourly totals must say the
 * same, per type.
 */
async function ledger(acct: { siteId: number; siteUserId: number }) {
  const where = { siteId: acct.siteId, siteUserId: BigInt(acct.siteUserId) };
  const [count, sum, byType, hours, totals] = await Promise.all([
    store.db.ledgerEntry.count({ where }),
    store.db.ledgerEntry.aggregate({ where, _sum: { quota: true, promptTokens: true } }),
    store.db.ledgerEntry.groupBy({ by: ["type"], where, _count: { _all: true }, _sum: { quota: true } }),
    store.db.ledgerHour.groupBy({ by: ["type"], where, _sum: { requests: true, quota: true } }),
    store.db.ledgerHourTotal.groupBy({ by: ["type"], where, _sum: { requests: true, quota: true } }),
  ]);
  const entriesByType = Object.fromEntries(byType.map((t) => [t.type, [t._count._all, Number(t._sum.quota ?? 0)]]));
  const sums = (rows: typeof hours) =>
    Object.fromEntries(rows.map((t) => [t.type, [t._sum.requests ?? 0, Number(t._sum.quota ?? 0)]]));
  expect(sums(hours)).toEqual(entriesByType);
  expect(sums(totals)).toEqual(entriesByType);
  return { count, quota: Number(sum._sum.quota ?? 0), prompt: Number(sum._sum.promptTokens ?? 0) };
}

function truth(logs: StandInLog[], from = NOW - 40 * 86_400) {
  const kept = logs.filter((l) => l.createdAt >= from && l.createdAt <= NOW);
  return {
    count: kept.length,
    quota: kept.reduce((s, l) => s + l.quota, 0),
    prompt: kept.reduce((s, l) => s + l.promptTokens, 0),
  };
}

afterEach(() => {
  fault = null;
});

describe("the ledger's sync", () => {
  it.each<StandInFamily>(FAMILY_LIST)(
    "copies a %s account's log exactly, twins and late entries included, and a second sync changes nothing",
    async (family) => {
      // Tens of thousands of entries over 40 days (one-api pages by 10: a fifth of it).
      const a = await account(family, { callsPerDay: family === "one-api" ? 150 : 700 });
      expect(a.logs.length).toBeGreaterThan(family === "one-api" ? 4000 : 20_000);
      // Identical entries in one second are separate requests: 3 twins of 20 entries, and one
      // second holding more than a page (150 identical entries). Pushed last, they have the
      // newest ids, as entries a site writes late for past seconds do.
      const busy = a.logs.filter((l) => l.type === 2).slice(-60, -40);
      a.logs.push(...busy.map(twin), ...busy.map(twin));
      const crowded = a.logs.find((l) => l.type === 2 && l.createdAt < NOW - 5 * 86_400)!;
      for (let i = 0; i < 150; i++) a.logs.push(twin(crowded));
      const result = await a.sync();
      expect(result.added).toBe(truth(a.logs).count);
      expect(await ledger(a.acct)).toEqual(truth(a.logs));
      const again = await a.sync();
      expect(again.added).toBe(0);
      expect(await ledger(a.acct)).toEqual(truth(a.logs));
    },
  );

  it("picks up entries the site writes late for past seconds, and keeps entries the site purges", async () => {
    const a = await account();
    await a.sync();
    // Late: two entries for a second ten minutes ago (one a twin of an entry already there).
    const recent = a.logs.filter((l) => l.type === 2 && l.createdAt > NOW - 3000).slice(-1)[0]!;
    a.logs.push(twin(recent), { ...recent, model: "late-model", quota: 777 });
    // Purged: the site drops its oldest ten days.
    const before = truth(a.logs);
    const purged = a.logs.filter((l) => l.createdAt < NOW - 20 * 86_400);
    a.logs.splice(0, a.logs.length, ...a.logs.filter((l) => l.createdAt >= NOW - 20 * 86_400));
    expect(purged.length).toBeGreaterThan(0);
    await syncLedger(store.db, a.acct, { db: store.db, ...DEPS }, { backfillDays: 40, now: NOW + 60 });
    expect(await ledger(a.acct)).toEqual(before);
  });

  it.each([1, 2, 3])("resumes a sync killed at a random page (run %i), without loss or duplication", async () => {
    const a = await account("new-api", { callsPerDay: 300 });
    a.logs.push(
      ...a.logs
        .filter((l) => l.type === 2)
        .slice(-30, -20)
        .map(twin),
    );
    const pages = Math.ceil(a.logs.length / 100);
    const killAt = 2 + Math.floor(Math.random() * pages);
    let served = 0;
    fault = (req, res) => {
      if (!(req.url ?? "").startsWith("/api/log/self?")) return false;
      served++;
      if (served !== killAt) return false;
      res.writeHead(502, { "Content-Type": "text/html" });
      res.end("<html>Bad Gateway</html>");
      return true;
    };
    await expect(a.sync(), `killed at page ${killAt}`).rejects.toThrow("站点请求失败");
    const status = await ledgerStatus(store.db, a.acct);
    expect(status.lastError).toBe("站点请求失败: 站点返回的不是 JSON（HTTP 502）");
    expect(status.running).toBe(false);
    const partial = await ledger(a.acct);
    expect(partial.count).toBeLessThan(truth(a.logs).count);
    await a.sync();
    expect(await ledger(a.acct), `killed at page ${killAt}`).toEqual(truth(a.logs));
    expect((await ledgerStatus(store.db, a.acct)).lastError).toBeNull();
  });

  it("two instances syncing one account at once store it exactly once; a holder whose lease lapsed stores nothing", async () => {
    const a = await account("new-api", { callsPerDay: 300 });
    const other = createDb(store.url);
    try {
      const deps = (db: typeof store.db) => ({ db, ...DEPS });
      const run = (db: typeof store.db) => syncLedger(db, a.acct, deps(db), { backfillDays: 40, now: NOW });
      const [first, second] = await Promise.allSettled([run(store.db), run(other)]);
      expect([first.status, second.status].sort()).toEqual(["fulfilled", "rejected"]);
      expect(await ledger(a.acct)).toEqual(truth(a.logs));

      // A holder that stalls past its lease: another instance takes over and finishes; the stalled
      // one finds its lease gone at its next page and stores nothing more.
      await store.db.ledgerEntry.deleteMany({});
      await store.db.ledgerHour.deleteMany({});
      await store.db.ledgerHourTotal.deleteMany({});
      await store.db.ledgerSync.deleteMany({});
      let stall: () => void = () => undefined;
      const stalled = new Promise<void>((resolve) => (stall = resolve));
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => (release = resolve));
      let served = 0;
      fault = (req, res) => {
        if (!(req.url ?? "").startsWith("/api/log/self?") || ++served !== 5) return false;
        stall();
        // The answer is the site's own, given once the other instance is done.
        void held.then(async () => {
          const headers = Object.fromEntries(
            Object.entries(req.headers).filter(([k]) => !["host", "connection"].includes(k)),
          ) as Record<string, string>;
          const answer = await fetch(`${a.site.gateway.url}${req.url ?? ""}`, { headers });
          res.writeHead(answer.status, { "Content-Type": "application/json" });
          res.end(await answer.text());
        });
        return true;
      };
      // Its held request waits as long as the other instance takes (a loaded machine's full sync is slower than 5 s).
      const patient = { db: store.db, ...DEPS, timeoutMs: 120_000 };
      const slow = syncLedger(store.db, a.acct, patient, { backfillDays: 40, now: NOW }).catch((e: unknown) => e);
      await stalled;
      fault = null;
      await store.db.ledgerSync.updateMany({ data: { leaseUntil: new Date(Date.now() - 1000) } });
      // The other instance has its own gates (they live in each process).
      freshProcessState();
      await run(other);
      release();
      const outcome = await slow;
      expect(outcome).toBeInstanceOf(LedgerBusy);
      expect(await ledger(a.acct)).toEqual(truth(a.logs));
    } finally {
      await closeDb(other);
    }
  });

  it("a sync told to stop (its process stops) ends after its slice, lets go of its lease, and the next one finishes it", async () => {
    const a = await account("new-api", { callsPerDay: 300 });
    const stop = new AbortController();
    let served = 0;
    fault = (req) => {
      if ((req.url ?? "").startsWith("/api/log/self?") && ++served === 3) stop.abort();
      return false;
    };
    const result = await syncLedger(
      store.db,
      a.acct,
      { db: store.db, ...DEPS },
      {
        backfillDays: 40,
        now: NOW,
        signal: stop.signal,
      },
    );
    expect(result.complete).toBe(false);
    // It read the slice it was on, no more.
    expect(served).toBe(3);
    const status = await ledgerStatus(store.db, a.acct);
    expect([status.running, status.lastError]).toEqual([false, REFUSED.stopped]);
    expect((await ledger(a.acct)).count).toBeLessThan(truth(a.logs).count);
    fault = null;
    await a.sync();
    expect(await ledger(a.acct)).toEqual(truth(a.logs));
  });

  it("a stopping process lets go of the leases of syncs stuck on a site: another instance goes on at once", async () => {
    const a = await account("new-api", { callsPerDay: 300 });
    let stuck: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (stuck = resolve));
    let served = 0;
    fault = (req) => {
      if (!(req.url ?? "").startsWith("/api/log/self?") || ++served !== 2) return false;
      stuck();
      return true; // never answered: the read waits for its time limit
    };
    const slow = syncLedger(
      store.db,
      a.acct,
      { db: store.db, ...DEPS, timeoutMs: 3000 },
      {
        backfillDays: 40,
        now: NOW,
      },
    ).catch((e: unknown) => e);
    await reached;
    expect((await ledgerStatus(store.db, a.acct)).running).toBe(true);
    expect(await releaseHeldLedgerLeases(store.db)).toBe(1);
    expect((await ledgerStatus(store.db, a.acct)).running).toBe(false);
    fault = null;
    const other = createDb(store.url);
    try {
      freshProcessState();
      await syncLedger(other, a.acct, { db: other, ...DEPS }, { backfillDays: 40, now: NOW });
    } finally {
      await closeDb(other);
    }
    expect(await slow).toBeInstanceOf(Error);
    expect(await ledger(a.acct)).toEqual(truth(a.logs));
  });

  it("runs one sync of an account at a time; a crashed holder's lease expires", async () => {
    const a = await account();
    const [first, second] = await Promise.allSettled([a.sync(), a.sync()]);
    expect([first.status, second.status].sort()).toEqual(["fulfilled", "rejected"]);
    const refused = [first, second].find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(LedgerBusy);
    expect(await ledger(a.acct)).toEqual(truth(a.logs));
    // A holder that died keeps its lease only until it expires.
    const where = { siteId: a.acct.siteId, siteUserId: BigInt(a.acct.siteUserId) };
    await store.db.ledgerSync.update({
      where: { siteId_siteUserId: where },
      data: { holder: "crashed", leaseUntil: new Date(Date.now() + 60_000) },
    });
    await expect(a.sync()).rejects.toBeInstanceOf(LedgerBusy);
    await store.db.ledgerSync.update({
      where: { siteId_siteUserId: where },
      data: { leaseUntil: new Date(Date.now() - 1000) },
    });
    await expect(a.sync()).resolves.toMatchObject({ added: 0 });
  });

  it("takes in an answer that came while people are served only after them, and nothing is lost", async () => {
    const a = await account();
    const path = (req: IncomingMessage) => new URL(req.url ?? "/", "http://x").pathname;
    let answered: (() => void) | null = null;
    let logCalls = 0;
    // Somebody starts being served while the sync's first log page is on its way back.
    fault = (req) => {
      if (path(req) === "/api/log/self" && logCalls++ === 0) answered = liveRequest();
      return false;
    };
    try {
      const done = a.sync();
      await vi.waitFor(() => expect(answered).not.toBeNull());
      await new Promise((r) => setTimeout(r, 700));
      // The page came back, and waits: nothing stored from it, no further page asked.
      expect((await ledger(a.acct)).count).toBe(0);
      expect(logCalls).toBe(1);
      answered!();
      // Nobody served any more: the sync goes on and ends exact.
      expect((await done).added).toBe(truth(a.logs).count);
      expect(await ledger(a.acct)).toEqual(truth(a.logs));
    } finally {
      fault = null;
      (answered as (() => void) | null)?.();
    }
  });

  it("usage.sync starts a sync and usage.status shows where the ledger stands", async () => {
    const a = await account();
    const { api } = callerFor(store.db, bearer(a.token), { siteRequestsPerMinute: 100_000, ledgerBackfillDays: 40 });
    const started = await api.usage.sync();
    expect(started.entries).toBe(0);
    let status = await api.usage.status();
    for (let i = 0; i < 100 && (status.running || status.syncedAt === null); i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await api.usage.status();
    }
    // Synced up to the moment it ran (the test's truth ends a little earlier), from the first
    // second of the window it really took (40 days before it ran, which is after this file began).
    expect(status).toMatchObject({ running: false, progress: null, lastError: null });
    expect(status.entries).toBe(truth(a.logs, Date.parse(status.oldest ?? "") / 1000).count);
    expect(Date.parse(status.oldest ?? "")).toBeLessThanOrEqual((NOW - 39 * 86_400) * 1000);
  });
});

describe("automatic syncs and retention", () => {
  const JOB = { syncMinutes: 10, keepDays: 400, backfillDays: 40, perMinute: 100_000, timeoutMs: 5000 };

  it("syncs at sign-in when automatic syncs are on, and not when they are off", async () => {
    const off = await startFamilySite("new-api", 0, {}, { days: 10, now: NOW - 60 });
    const on = await startFamilySite("new-api", 1, {}, { days: 10, now: NOW - 60 });
    open.push(off, on);
    const offId = (await siteRegistry(store.db).add({ name: "off", url: off.gateway.url })).id;
    const onId = (await siteRegistry(store.db).add({ name: "on", url: on.gateway.url })).id;
    await signInWith(store.db, offId, off.user, { ledgerSyncMinutes: 0 });
    const { token } = await signInWith(store.db, onId, on.user, {
      ledgerSyncMinutes: 10,
      siteRequestsPerMinute: 100_000,
    });
    const session = (await sessionStore(store.db).findValid(token))!;
    let status = await ledgerStatus(store.db, accountOf(session));
    for (let i = 0; i < 100 && status.syncedAt === null; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = await ledgerStatus(store.db, accountOf(session));
    }
    expect(status.entries).toBe(on.history.logs.length);
    // By the time the other sign-in's whole sync is done, this one has not begun one: no log read, no sync.
    expect(off.gateway.requests.filter((r) => r.path === "/api/log/self")).toEqual([]);
    expect(await store.db.ledgerSync.count({ where: { siteId: offId } })).toBe(0);
  });

  it("waits longer after each failure in a row, so a failing site is not hammered, and back to the interval once it answers", async () => {
    const live = await account("new-api");
    const failing = (req: IncomingMessage, res: ServerResponse) => {
      if (!(req.url ?? "").startsWith("/api/log")) return false;
      res.writeHead(500, { "content-type": "application/json" });
      res.end('{"success":false,"message":"数据库出错"}');
      return true;
    };
    fault = failing;
    const t0 = Date.now();
    expect(await syncDueLedgers(store.db, JOB, t0)).toBe(1);
    expect((await ledgerStatus(store.db, live.acct)).lastError).not.toBeNull();
    // One failure: twice the interval before the next try.
    expect(await syncDueLedgers(store.db, JOB, t0 + 11 * 60_000)).toBe(0);
    expect(await syncDueLedgers(store.db, JOB, t0 + 21 * 60_000)).toBe(1);
    // Two: four times.
    expect(await syncDueLedgers(store.db, JOB, t0 + 21 * 60_000 + 39 * 60_000)).toBe(0);
    fault = null;
    expect(await syncDueLedgers(store.db, JOB, t0 + 21 * 60_000 + 41 * 60_000)).toBe(1);
    expect((await ledgerStatus(store.db, live.acct)).lastError).toBeNull();
  });

  it("goes on at the next look with a window its holder left half read, not at the account's next moment", async () => {
    const a = await account("new-api");
    const t0 = Date.now();
    expect(await syncDueLedgers(store.db, JOB, t0)).toBe(1);
    const done = await ledger(a.acct);
    // Another instance was reading the last two days again when it died: its lease ran out, the
    // window and its cursor are still there.
    const now = Math.floor(t0 / 1000);
    await store.db.ledgerSync.updateMany({
      data: {
        holder: "instance-that-died",
        leaseUntil: new Date(t0 - 1000),
        windowFrom: now - 2 * 86_400,
        windowTo: now,
        cursor: now - 86_400,
      },
    });
    // Its hold on the account ran out with it.
    await store.db.ledgerDue.updateMany({ data: { dueAt: new Date(t0 - 1000) } });
    // A minute later on this instance (a fresh process state: it never tried the account), whose
    // next moment for the account is at least half an interval away: taken up again at once.
    freshProcessState();
    expect(await syncDueLedgers(store.db, JOB, t0 + 60_000)).toBe(1);
    expect(await ledger(a.acct)).toEqual(done);
    expect(await store.db.ledgerSync.findFirst({ select: { cursor: true, holder: true } })).toEqual({
      cursor: null,
      holder: null,
    });
  });

  it("a site that asks for quiet (429) defers the sync to the next look, counts as no failure and shows no error", async () => {
    const a = await account("new-api");
    let answered = false;
    fault = (req, res) => {
      if (answered || !(req.url ?? "").startsWith("/api/log/self?")) return false;
      answered = true;
      res.writeHead(429, { "Retry-After": "1" });
      res.end();
      return true;
    };
    const t0 = Date.now();
    expect(await syncDueLedgers(store.db, JOB, t0)).toBe(1);
    // Waiting, not failed: no error on the account, and it is due again at the next look.
    expect((await ledgerStatus(store.db, a.acct)).lastError).toBeNull();
    const due = await store.db.ledgerDue.findFirstOrThrow({ select: { dueAt: true, failures: true } });
    expect(due).toEqual({ dueAt: new Date(t0), failures: 0 });
    // The next look goes on (a failure would wait two intervals), after the site's pause.
    await new Promise((r) => setTimeout(r, 1100));
    expect(await syncDueLedgers(store.db, JOB, t0 + 60_000)).toBe(1);
    // The runner backfills from 40 days before the moment it ran (later than this file's start).
    const oldestA = Date.parse((await ledgerStatus(store.db, a.acct)).oldest ?? "") / 1000;
    expect(await ledger(a.acct)).toEqual(truth(a.logs, oldestA));
    expect((await ledgerStatus(store.db, a.acct)).lastError).toBeNull();
  });

  it("a look of the runner does not wait for another's syncs: a slow site holds up no other, and no account runs twice", async () => {
    const slow = await account("new-api");
    let hold: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (hold = resolve));
    let stalled = false;
    fault = (req, res) => {
      if (
        !(req.url ?? "").startsWith("/api/log/self?") ||
        (req.headers["new-api-user"] ?? "") !== String(slow.site.user.id)
      ) {
        return false;
      }
      if (stalled) return false;
      stalled = true;
      // The first log page of the slow site answers only when let go.
      void held.then(() => {
        res.writeHead(502, { "Content-Type": "text/html" });
        res.end("<html>Bad Gateway</html>");
      });
      return true;
    };
    const t0 = Date.now();
    const first = syncDueLedgers(store.db, JOB, t0);
    while (!stalled) await new Promise((r) => setTimeout(r, 20));
    // A second site's account saved meanwhile: the next look syncs it while the first one's sync still waits.
    const fast = await account("one-hub");
    expect(await syncDueLedgers(store.db, JOB, t0 + 60_000)).toBe(1);
    // The runner backfills from 40 days before the moment it ran (later than this file's start).
    const oldestFast = Date.parse((await ledgerStatus(store.db, fast.acct)).oldest ?? "") / 1000;
    expect(await ledger(fast.acct)).toEqual(truth(fast.logs, oldestFast));
    expect((await ledgerStatus(store.db, slow.acct)).running).toBe(true);
    hold();
    expect(await first).toBe(1);
  });

  it("syncs every account with a live session when due, never one without, and drops old entries but keeps their totals", async () => {
    const live = await account("new-api");
    const gone = await account("one-hub");
    await sessionStore(store.db).remove(gone.acct.sessionId);
    const t0 = Date.now();
    expect(await syncDueLedgers(store.db, JOB, t0)).toBe(1);
    // Backfilled from 40 days before the moment it ran.
    const oldest = Date.parse((await ledgerStatus(store.db, live.acct)).oldest ?? "") / 1000;
    expect(oldest).toBeGreaterThanOrEqual(Math.floor(t0 / 1000) - 40 * 86_400);
    expect(await ledger(live.acct)).toEqual(truth(live.logs, oldest));
    expect(await store.db.ledgerSync.count({ where: { siteId: gone.acct.siteId } })).toBe(0);
    // Not due again before half the interval, and due once its moment of the interval has come, within one interval.
    expect(await syncDueLedgers(store.db, JOB, t0 + 60_000)).toBe(0);
    expect(await syncDueLedgers(store.db, JOB, t0 + 4 * 60_000)).toBe(0);
    expect(await syncDueLedgers(store.db, JOB, t0 + 11 * 60_000)).toBe(1);

    const where = { siteId: live.acct.siteId, siteUserId: BigInt(live.acct.siteUserId) };
    const hoursBefore = await store.db.ledgerHour.aggregate({ where, _sum: { quota: true, requests: true } });
    const cutoff = NOW - 20 * 86_400;
    const old = await store.db.ledgerEntry.count({ where: { ...where, at: { lt: cutoff } } });
    expect(old).toBeGreaterThan(0);
    expect(await pruneLedgers(store.db, 20, cutoff * 1000 + 20 * 86_400_000)).toBe(old);
    expect(await store.db.ledgerEntry.count({ where: { ...where, at: { lt: cutoff } } })).toBe(0);
    expect(await store.db.ledgerHour.aggregate({ where, _sum: { quota: true, requests: true } })).toEqual(hoursBefore);
  });
});
