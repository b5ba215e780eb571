import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import { demoHistory } from "../../src/demo/history";
import { freshProcessState } from "../../src/server/core/process-state";
import { syncDueLedgers } from "../../src/server/jobs/ledger";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/**
 * 全部账户 right after many accounts were added, before the runner reached them: every row comes
 * at once from what the verification read (the balance its site gave), no site asked, marked
 * 首次同步中 and counted in the totals as such; once synced, the rows are the ledger's.
 */

let store: TempDb;
let site: RunningGateway;
let siteId: number;
const COUNT = 12;
const users: GatewayUser[] = Array.from({ length: COUNT }, (_, i) => {
  const history = demoHistory({ seed: 40 + i, days: 2, callsPerDay: 30 });
  return {
    accessToken: `sk-first-sync-${i}-0123456789abcdef`,
    data: newApiUser(700 + i, {
      username: `first${i}`,
      quota: history.totals.quota + i * 1000,
      used_quota: history.totals.usedQuota,
      request_count: history.totals.requestCount,
    }),
    logs: history.logs,
  };
});

beforeAll(async () => {
  store = await tempStore();
  site = await startGateway({ family: "new-api", users });
  siteId = (await siteRegistry(store.db).add({ name: "批量站", url: site.url })).id;
});
afterAll(async () => {
  await site?.close();
  await store?.cleanup();
});

describe("accounts waiting for their first sync", () => {
  it("list at once with the balance their site gave when added, asking no site, and become the ledger's once synced", async () => {
    const made = await callerFor(store.db, {}, { timeoutMs: 2000 }).api.workspace.register({
      name: "批量添加",
      password: "first-sync-rows-password",
    });
    const headers = bearer(made.data.token);
    // Added as a bulk add is: the syncs wait for the runner (none started here).
    const adding = callerFor(store.db, headers, { timeoutMs: 2000, ledgerSyncMinutes: 0 }).api;
    for (const u of users) {
      const saved = await adding.workspace.addAccount({
        siteId,
        userId: Number(u.data.id),
        accessToken: u.accessToken,
      });
      if (!saved.success) throw new Error(saved.message);
    }
    const api = callerFor(store.db, headers, { timeoutMs: 2000, ledgerSyncMinutes: 10 }).api;
    const tz = "Asia/Shanghai";
    freshProcessState();
    const asked = site.requests.length;
    const stored = await api.account.storedRows({ tz });
    const overview = await api.account.overview({ tz });
    expect(site.requests.length).toBe(asked);
    expect(stored.rows).toHaveLength(COUNT);
    const byUser = new Map(
      (await api.account.list()).accounts.map((a) => [a.key, users.find((u) => u.data.id === a.userId)]),
    );
    for (const { key, row } of stored.rows) {
      expect(row.state).toBe("syncing");
      expect(row.message).toBe("首次同步中：余额是站点在添加账户时报告的，今日消费在首次同步后显示");
      expect(row.summary).toBeNull();
      expect(row.lastKnown?.balance.quota).toBe(byUser.get(key)?.data.quota);
      expect(Date.now() - Date.parse(row.lastKnown?.at ?? "")).toBeLessThan(60_000);
    }
    const quotaSum = users.reduce((s, u) => s + Number(u.data.quota), 0);
    expect(overview.data.rows.every((r) => r.state === "syncing")).toBe(true);
    expect(overview.data.totals.staleAccounts).toBe(COUNT);
    expect(overview.data.totals.balanceUsd).toBeCloseTo(quotaSum / 500_000, 5);

    // The runner syncs them (8 accounts of one site a look): each row is then the ledger's
    // (today's spend included), still without asking the site.
    const job = { syncMinutes: 10, keepDays: 400, backfillDays: 5, perMinute: 600, timeoutMs: 2000 };
    let synced = 0;
    // The runner's looks, 15 s apart: the site's accounts past its 8 are due at the next one.
    for (let look = 0; look < 4 && synced < COUNT; look++) {
      synced += await syncDueLedgers(store.db, job, Date.now() + look * 16_000);
    }
    expect(synced).toBe(COUNT);
    freshProcessState();
    const afterSync = site.requests.length;
    const rows = await api.account.storedRows({ tz });
    expect(site.requests.length).toBe(afterSync);
    expect(rows.rows).toHaveLength(COUNT);
    for (const { key, row } of rows.rows) {
      expect(row.state).toBe("ok");
      expect(row.summary?.balance.quota).toBe(byUser.get(key)?.data.quota);
      expect(row.summary?.today).toBeDefined();
    }
  }, 60_000);
});
