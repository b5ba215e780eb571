import { describe, expect, it } from "vitest";
import { seedBalanceHistory } from "../../src/server/ledger/balance-history";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import type { TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";
import { signInAndSync } from "../support/ledger";

/**
 * 全部账户's trends (docs/design.md 27): each account's balance at the end of every day is the last
 * balance noted by then, the totals add the accounts up, and today's income is income's own.
 */
let store: TempDb;
const open: FamilySite[] = [];
freshStorePerTest((s) => (store = s), open);

const NOW = Math.floor(Date.now() / 1000);
const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
const QPU = 500_000;

describe("trends", () => {
  it("gives each day's closing balance per account, their sum, and today's income", async () => {
    const sites = await Promise.all([
      startFamilySite(
        "new-api",
        0,
        { status: { checkin_enabled: true }, checkinReward: 4821 },
        { days: 30, now: NOW - 120, callsPerDay: 20 },
      ),
      startFamilySite("one-hub", 1, {}, { days: 30, now: NOW - 120, callsPerDay: 20 }),
    ]);
    open.push(...sites);
    let cookie = "";
    const tokens: string[] = [];
    for (const [i, site] of sites.entries()) {
      const { id } = await siteRegistry(store.db).add({ name: `站点 ${i}`, url: site.gateway.url });
      await seedBalanceHistory(store.db, { siteId: id, siteUserId: site.user.id }, site.history.balances);
      const signedIn = await signInAndSync(store.db, id, site.user, NOW - 60, cookie);
      cookie = signedIn.cookie;
      tokens.push(signedIn.token);
    }
    // Checked in here today: its reward is today's income (this service's record, until the next sync).
    const done = await callerFor(store.db, bearer(tokens[0]!)).api.actions.checkin();
    expect(done.success && done.data.state).toBe("done");
    const api = callerFor(store.db, { cookie }).api;
    const trends = (await api.usage.trends({ accounts: "all", tz: "UTC" })).data;
    expect(trends.days).toHaveLength(30);
    expect(trends.days.at(-1)).toBe(day(NOW));
    expect(trends.accounts).toHaveLength(2);
    for (const site of sites) {
      const account = trends.accounts.find((a) => a.userId === site.user.id)!;
      // A past day closes at its history's last balance by its end.
      const d = trends.days[10]!;
      const end = Date.parse(`${d}T00:00:00Z`) / 1000 + 86_400;
      const last = site.history.balances.filter((b) => b.at < end).at(-1)!;
      expect(account.balancesUsd[10]).toBeCloseTo(last.quota / QPU, 6);
      // Today's is the balance the sign-in's sync noted.
      expect(account.balancesUsd.at(-1)).toBeCloseTo(site.history.totals.quota / QPU, 6);
    }
    expect(trends.totals.balancesUsd[10]).toBeCloseTo(
      trends.accounts.reduce((s, a) => s + (a.balancesUsd[10] ?? 0), 0),
      6,
    );
    const income = (await api.usage.income({ accounts: "all", tz: "UTC", from: day(NOW), to: day(NOW) })).data;
    expect(trends.totals.incomeTodayUsd).toBeCloseTo(income.totals.incomeUsd, 6);
    expect(trends.accounts.find((a) => a.userId === sites[0].user.id)?.incomeTodayUsd).toBeGreaterThanOrEqual(
      4821 / QPU,
    );

    // A range over 92 days is refused with the reason; Bearer reads its own account only.
    await expect(api.usage.trends({ accounts: "all", tz: "UTC", from: day(NOW - 120 * 86_400) })).rejects.toThrow(
      "余额走势的范围最长 92 天",
    );
    const own = (await callerFor(store.db, bearer(tokens[1]!)).api.usage.trends({ accounts: "all", tz: "UTC" })).data;
    expect(own.accounts.map((a) => a.userId)).toEqual([sites[1].user.id]);
  });
});
