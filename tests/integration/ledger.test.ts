import type { IncomingMessage, ServerResponse } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LedgerBusy, ledgerStatus, syncLedger } from "../../src/server/accounts/ledger";
import { accountOf } from "../../src/server/accounts/overview";
import { clearSiteDataCache } from "../../src/server/accounts/site-data";
import { resetGates } from "../../src/server/gateway/gate";
import { sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import type { StandInFamily, StandInLog } from "../../src/demo/gateway";
import { bearer, callerFor, signInWith } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";
import { startFamilySite, type FamilySite } from "../support/families";

/**
 * The ledger against a stand-in whose log is a known truth: its sums equal the truth exactly after
 * one sync, after repeated syncs, with identical twins in one second, with entries written late for
 * past seconds, after the site purges entries, and after a sync that died halfway.
 */

let store: TempDb;
const open: FamilySite[] = [];
const DEPS = { timeoutMs: 5000, perMinute: 100_000 };
const NOW = Math.floor(Date.now() / 1000);

beforeEach(async () => {
  store = await tempStore();
  resetGates();
  clearSiteDataCache();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.gateway.close()));
  await store.cleanup();
});

let fault: ((req: IncomingMessage, res: ServerResponse) => boolean) | null = null;

async function account(family: StandInFamily = "new-api") {
  const site = await startFamilySite(family, 0, { intercept: (req, res) => fault?.(req, res) ?? false });
  open.push(site);
  const { id } = await siteRegistry(store.db).add({ name: family, url: site.gateway.url });
  const { token } = await signInWith(store.db, id, site.user);
  const session = (await sessionStore(store.db).findValid(token))!;
  const acct = accountOf(session);
  const sync = () => syncLedger(store.db, acct, { db: store.db, ...DEPS }, { backfillDays: 40, now: NOW });
  return { site, acct, token, sync, logs: site.history.logs };
}

const twin = (l: StandInLog): StandInLog => ({ ...l });

/** The ledger's view: entries, and the sum of quota. */
async function ledger(acct: { siteId: number; siteUserId: number }) {
  const where = { siteId: acct.siteId, siteUserId: BigInt(acct.siteUserId) };
  const [count, sum] = await Promise.all([
    store.db.ledgerEntry.count({ where }),
    store.db.ledgerEntry.aggregate({ where, _sum: { quota: true, promptTokens: true } }),
  ]);
  return { count, quota: sum._sum.quota ?? 0, prompt: sum._sum.promptTokens ?? 0 };
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
  it.each<StandInFamily>(["new-api", "one-hub", "veloera"])(
    "copies a %s account's log exactly, twins included, and a second sync changes nothing",
    async (family) => {
      const a = await account(family);
      // Identical entries in one second are separate requests: 3 twins of 20 entries, and one
      // second holding more than a page (150 identical entries).
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

  it("resumes a sync that died halfway, without loss or duplication", async () => {
    const a = await account();
    let served = 0;
    fault = (req, res) => {
      if (!(req.url ?? "").startsWith("/api/log/self?")) return false;
      served++;
      if (served !== 7) return false;
      res.writeHead(502, { "Content-Type": "text/html" });
      res.end("<html>Bad Gateway</html>");
      return true;
    };
    await expect(a.sync()).rejects.toThrow("站点请求失败");
    const status = await ledgerStatus(store.db, a.acct);
    expect(status.lastError).toBe("站点请求失败: 站点返回的不是 JSON（HTTP 502）");
    expect(status.running).toBe(false);
    const partial = await ledger(a.acct);
    expect(partial.count).toBeGreaterThan(0);
    expect(partial.count).toBeLessThan(truth(a.logs).count);
    await a.sync();
    expect(await ledger(a.acct)).toEqual(truth(a.logs));
    expect((await ledgerStatus(store.db, a.acct)).lastError).toBeNull();
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
    // Synced up to the moment it ran (the test's truth ends a little earlier).
    expect(status).toMatchObject({ running: false, progress: null, lastError: null });
    expect(status.entries).toBe(truth(a.logs).count);
    expect(Date.parse(status.oldest ?? "")).toBeLessThanOrEqual((NOW - 39 * 86_400) * 1000);
  });
});
