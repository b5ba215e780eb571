import { describe, expect, it } from "vitest";
import type { StandInFamily } from "../../src/demo/gateway";
import { accountOf } from "../../src/server/accounts/overview";
import { syncLedger } from "../../src/server/ledger/sync";
import { sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import type { TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";
import { signInAndSync } from "../support/ledger";

/**
 * Income beside spend (docs/design.md 27): per family, a month's top-ups (new-api and the demo
 * write the amount only in the entry's text) sum to what the history paid in, the spend is the
 * ledger's own, and a check-in counts once: from the site's log where it logs one, from this
 * service's record where it logs none.
 */
let store: TempDb;
const open: FamilySite[] = [];
freshStorePerTest((s) => (store = s), open);

const NOW = Math.floor(Date.now() / 1000);
const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
const range = { from: day(NOW - 30 * 86_400), to: day(NOW), tz: "UTC" };
const QPU = 500_000;

describe("income", () => {
  it.each(["new-api", "one-hub", "done-hub", "one-api"] as StandInFamily[])(
    "on %s: top-ups, rewards and spend reconcile with the history and the ledger's sums",
    async (family) => {
      const checkins = family === "new-api";
      const site = await startFamilySite(
        family,
        0,
        checkins ? { status: { checkin_enabled: true }, checkinReward: 4821 } : {},
        { days: 30, now: NOW - 120, callsPerDay: 8 },
      );
      open.push(site);
      const { id } = await siteRegistry(store.db).add({ name: `站点 ${family}`, url: site.gateway.url });
      const { token } = await signInAndSync(store.db, id, site.user, NOW - 60);
      const api = callerFor(store.db, bearer(token)).api;
      const topups = site.history.topups.filter((t) => t.createTime + 60 >= NOW - 30 * 86_400);
      expect(topups.length).toBeGreaterThan(0);

      if (checkins) {
        // Checked in through this service: the site logs it (type 4, the amount in its text) and
        // this service records it too; after the next sync it counts once.
        const done = await api.actions.checkin();
        expect(done.success && done.data.state).toBe("done");
      } else {
        // A check-in this service made on a site whose log has none (as if): its record counts.
        await store.db.accountAction.create({
          data: {
            siteId: id,
            siteUserId: BigInt(site.user.id),
            at: new Date((NOW - 3600) * 1000),
            kind: "checkin",
            ok: true,
            message: "签到成功",
            quota: 4821n,
            device: "test",
          },
        });
      }
      const session = (await sessionStore(store.db).findValid(token))!;
      await syncLedger(
        store.db,
        accountOf(session),
        { db: store.db, timeoutMs: 5000, perMinute: 100_000 },
        {
          backfillDays: 40,
          now: Math.floor(Date.now() / 1000) + 5,
        },
      );

      const income = (await api.usage.income({ ...range, to: day(NOW + 86_400) })).data;
      expect(income.totals.topupsUsd).toBeCloseTo(
        topups.reduce((s, t) => s + t.amount, 0),
        6,
      );
      expect(income.totals.rewardsUsd).toBeCloseTo(4821 / QPU, 6);
      expect(income.totals.redeemedUsd).toBe(0);
      expect(income.totals.incomeUsd).toBeCloseTo(income.totals.topupsUsd + income.totals.rewardsUsd, 6);
      // The spend is the ledger's own, day by day.
      const summary = (await api.usage.summary({ ...range, to: day(NOW + 86_400), groupBy: "day" })).data;
      expect(income.rows.map((r) => r.day)).toEqual(summary.rows.map((r) => r.key));
      expect(income.rows.map((r) => r.spendUsd)).toEqual(summary.rows.map((r) => r.usd));
      expect(income.totals.netUsd).toBeCloseTo(income.totals.incomeUsd - summary.totals.usd, 5);
      // Each top-up on the day its entry was written.
      for (const t of topups) {
        const row = income.rows.find((r) => r.day === day(t.createTime + 60))!;
        expect(row.topupsUsd).toBeGreaterThanOrEqual(t.amount);
      }
    },
  );

  it("answers income and the balance whole when a site's figures are hostile: a 400-digit top-up, a quota_per_unit of 1e-300", async () => {
    const site = await startFamilySite("new-api", 0, {}, { days: 5, now: NOW - 120, callsPerDay: 4 });
    open.push(site);
    const { id } = await siteRegistry(store.db).add({ name: "敌意站点", url: site.gateway.url });
    const { token } = await signInAndSync(store.db, id, site.user, NOW - 60);
    const api = callerFor(store.db, bearer(token)).api;
    const before = (await api.usage.income({ ...range, to: day(NOW + 86_400) })).data.totals;
    // Entries kept before the bounds, and a money setting stored before them.
    const hostile = (fingerprint: string, content: string) => ({
      ...{ siteId: id, siteUserId: BigInt(site.user.id), at: NOW - 30, fingerprint, ordinal: 0, type: "topup" },
      ...{ model: "", tokenName: "", quota: 0n, promptTokens: 0n, completionTokens: 0n, stream: false, content },
    });
    await store.db.ledgerEntry.createMany({
      data: [
        hostile("h1", `通过兑换码充值 ＄${"9".repeat(400)} 额度`),
        hostile("h2", `使用在线充值成功，充值金额: ${"9".repeat(400)} 点额度`),
      ],
    });
    const income = await api.usage.income({ ...range, to: day(NOW + 86_400) });
    expect(income.success).toBe(true);
    // The hostile amounts are unknown: nothing of them is added.
    expect(income.data.totals.redeemedUsd).toBe(before.redeemedUsd);
    expect(income.data.totals.topupsUsd).toBe(before.topupsUsd);
    expect(Number.isFinite(income.data.totals.netUsd)).toBe(true);

    await store.db.site.update({ where: { id }, data: { quotaPerUnit: 1e-300 } });
    const balance = await api.usage.balance({ ...range, to: day(NOW + 86_400) });
    expect(balance.success).toBe(true);
    expect(JSON.stringify(balance.data)).not.toMatch(/null,"daysLeft":Infinity|Infinity/);
    const again = await api.usage.income({ ...range, to: day(NOW + 86_400) });
    expect(again.success).toBe(true);
    expect(again.data.totals.topupsUsd).toBeCloseTo(before.topupsUsd, 6);
  });
});
