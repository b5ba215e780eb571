import { describe, expect, it } from "vitest";
import { accountOf } from "../../src/server/accounts/overview";
import { seedBalanceHistory } from "../../src/server/ledger/balance-history";
import { verifyCharges } from "../../src/server/ledger/check";
import { reconcile } from "../../src/server/ledger/reconcile";
import { syncLedger } from "../../src/server/ledger/sync";
import { listSource } from "../../src/server/prices/lists";
import { sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import type { TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";
import { signInAndSync } from "../support/ledger";

/**
 * Plans as well as wallets (docs/design.md 27): a new-api account that bought a daily plan ten days
 * ago, the plan paying each day's calls until its $0.50 is used and the wallet the rest. 套餐 shows
 * the plan as the site keeps it, splits the spend by who paid (the ledger's own sums), folds the
 * plan into 可用天数; 对账 counts only what the wallet paid, and the purchase is no income.
 */
let store: TempDb;
const open: FamilySite[] = [];
freshStorePerTest((s) => (store = s), open);

const NOW = Math.floor(Date.now() / 1000);
const day = (s: number) => new Date(s * 1000).toISOString().slice(0, 10);
const range = { from: day(NOW - 30 * 86_400), to: day(NOW + 86_400), tz: "UTC" };
const QPU = 500_000;
const PLAN = { id: 5, planId: 3, title: "团队日卡", daysAgo: 10, days: 30, dailyUsd: 0.5, price: 29.9 };

async function planSite(extra: Parameters<typeof startFamilySite>[2] = {}) {
  const site = await startFamilySite(
    "new-api",
    0,
    {
      plans: [{ id: PLAN.planId, title: PLAN.title, price: PLAN.price, total: 250_000, resetPeriod: "daily" }],
      ...extra,
    },
    { days: 30, now: NOW - 120, callsPerDay: 40, utcOffsetHours: 0, plan: PLAN },
  );
  open.push(site);
  return site;
}

describe("plans", () => {
  it("shows a new-api account's plan, the spend each source paid, and 可用天数 with the plan folded in", async () => {
    const site = await planSite();
    const { id } = await siteRegistry(store.db).add({ name: "套餐站", url: site.gateway.url });
    const owner = { siteId: id, siteUserId: site.user.id };
    await seedBalanceHistory(store.db, owner, site.history.balances);
    const { token } = await signInAndSync(store.db, id, site.user, NOW - 60);
    await verifyCharges(store.db, listSource(store.db));
    await verifyCharges(store.db, listSource(store.db));
    const api = callerFor(store.db, bearer(token)).api;

    const answer = (await api.usage.plans(range)).data;
    expect(answer.accounts).toHaveLength(1);
    const account = answer.accounts[0]!;
    expect(account).toMatchObject({ supported: true, preference: "subscription_first" });
    const sub = site.history.subscription!;
    // The history ends two minutes before NOW: when a day began in between (a run just past
    // midnight), the site's reset is due and not applied yet, and the plan's window is a fresh one.
    const used = sub.nextReset! * 1000 <= Date.now() ? 0 : sub.used;
    expect(account.plans).toEqual([
      expect.objectContaining({
        id: PLAN.id,
        planId: PLAN.planId,
        title: PLAN.title,
        status: "active",
        source: "order",
        totalUsd: 0.5,
        usedUsd: used / QPU,
        remainingUsd: (sub.total - used) / QPU,
        resetPeriod: "daily",
        endsAt: new Date(sub.end * 1000).toISOString(),
        nextResetAt: new Date(sub.nextReset! * 1000).toISOString(),
        overflow: true,
      }),
    ]);
    // The spend split as the log says who paid: the ledger's own sums, to the unit.
    const consume = site.history.logs.filter((l) => l.type === 2);
    const planPaid = consume.filter((l) => l.subscription);
    expect(planPaid.length).toBeGreaterThan(20);
    expect(account.planRequests).toBe(planPaid.length);
    expect(account.planSpendUsd).toBeCloseTo(planPaid.reduce((s, l) => s + l.quota, 0) / QPU, 6);
    const all = consume.reduce((s, l) => s + l.quota, 0) / QPU;
    expect(account.walletSpendUsd).toBeCloseTo(all - account.planSpendUsd, 6);
    expect(answer.totals).toMatchObject({ planRequests: planPaid.length, activePlans: 1 });

    // The plan pays part of every day: the wallet lasts longer than it would alone, and 余额 says the same.
    expect(account.daysLeft).not.toBeNull();
    expect(account.daysLeft!).toBeGreaterThan(account.walletDaysLeft!);
    const balance = (await api.usage.balance(range)).data;
    expect(balance.accounts[0]?.daysLeft).toBe(account.daysLeft);
    // 全部账户's row and its warning read the same 预计可用天数.
    const row = (await api.account.overview({ tz: "UTC" })).data.rows[0];
    expect(row?.daysLeft).toBe(account.daysLeft);

    // 对账: the balance moved by what the wallet paid, day by day; no day is off.
    const days = await reconcile(store.db, { ...owner, quotaPerUnit: QPU }, { ...range, to: day(NOW - 86_400) });
    const measured = days.filter((d) => d.change !== null);
    expect(measured.length).toBeGreaterThan(20);
    expect(measured.filter((d) => d.flagged)).toEqual([]);

    // The plan's purchase (paid outside the site) brought nothing into the wallet.
    const income = (await api.usage.income(range)).data;
    const topups = site.history.topups.filter((t) => t.createTime + 60 >= NOW - 30 * 86_400);
    expect(income.totals.topupsUsd).toBeCloseTo(
      topups.reduce((s, t) => s + t.amount, 0),
      6,
    );
    // What the plans paid is spend the wallet did not pay: the net is the wallet's.
    expect(income.totals.planSpendUsd).toBeCloseTo(account.planSpendUsd, 6);
    expect(income.totals.netUsd).toBeCloseTo(
      income.totals.incomeUsd - (income.totals.spendUsd - income.totals.planSpendUsd),
      5,
    );

    // Read at most every 15 minutes: a second sync now does not ask again.
    const asked = () => site.gateway.requests.filter((r) => r.path === "/api/subscription/self").length;
    expect(asked()).toBe(1);
    const session = (await sessionStore(store.db).findValid(token))!;
    const deps = { db: store.db, timeoutMs: 5000, perMinute: 100_000 };
    await syncLedger(store.db, accountOf(session), deps, { backfillDays: 40, now: NOW });
    expect(asked()).toBe(1);
    await syncLedger(store.db, accountOf(session), deps, { backfillDays: 40, now: NOW + 16 * 60 });
    expect(asked()).toBe(2);
  });

  it("names an unlisted plan by its number, and leaves sites without plans out", async () => {
    // The site's list is empty until its payment terms are confirmed: the plan is known, untitled.
    const site = await planSite({ compliance: false });
    const { id } = await siteRegistry(store.db).add({ name: "未确认合规", url: site.gateway.url });
    const { token } = await signInAndSync(store.db, id, site.user, NOW - 60);
    const api = callerFor(store.db, bearer(token)).api;
    const plan = (await api.usage.plans(range)).data.accounts[0]?.plans[0];
    expect(plan).toMatchObject({ title: `套餐 #${PLAN.planId}`, resetPeriod: null, totalUsd: 0.5 });

    // A build before subscriptions (404) and another family: nothing to show, nothing asked of one-api.
    const legacy = await startFamilySite("one-hub", 1, {}, { days: 5, now: NOW - 120, callsPerDay: 4 });
    open.push(legacy);
    const other = await siteRegistry(store.db).add({ name: "one-hub", url: legacy.gateway.url });
    const second = await signInAndSync(store.db, other.id, legacy.user, NOW - 60);
    const mine = callerFor(store.db, bearer(second.token)).api;
    expect((await mine.usage.plans(range)).data.accounts).toEqual([]);
    expect(legacy.gateway.requests.some((r) => r.path.startsWith("/api/subscription"))).toBe(false);
  });
});
