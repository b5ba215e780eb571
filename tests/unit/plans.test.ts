import { describe, expect, it } from "vitest";
import { RUNWAY_MAX_DAYS, paidByPlan, planCatalog, plansOf, runway, type Plan } from "../../src/server/gateway/plans";
import { check, type Facts } from "../../src/server/alerts/engine";
import { planPurchaseQuota } from "../../src/shared/log-types";

const DAY = 86_400;
const NOW = 1_790_000_000;
/** $1 = 500,000 quota. */
const USD = 500_000;

const plan = (over: Partial<Plan> = {}): Plan => ({
  id: 1,
  planId: 7,
  title: "Pro",
  status: "active",
  source: "order",
  total: 3 * USD,
  used: 0,
  start: NOW - DAY,
  end: NOW + 30 * DAY,
  nextReset: NOW + DAY / 2,
  lastReset: NOW - DAY / 2,
  resetPeriod: "daily",
  resetSeconds: null,
  overflow: true,
  ...over,
});

describe("a new-api account's subscriptions", () => {
  it("reads /api/subscription/self with every row, titled and periodised by the plan list", () => {
    const catalog = planCatalog([
      { plan: { id: 7, title: "Pro 月卡", quota_reset_period: "daily", total_amount: 1_500_000 } },
      { plan: { id: 9, title: "自定义", quota_reset_period: "custom", quota_reset_custom_seconds: 18_000 } },
    ]);
    const read = plansOf(
      {
        billing_preference: "",
        subscriptions: [{ subscription: { id: 3, plan_id: 7, status: "active" } }],
        all_subscriptions: [
          {
            subscription: {
              id: 3,
              plan_id: 7,
              amount_total: 1_500_000,
              amount_used: 400_000,
              start_time: NOW - DAY,
              end_time: NOW + 29 * DAY,
              status: "active",
              source: "balance",
              next_reset_time: NOW + 3600,
              last_reset_time: NOW - 20 * 3600,
              allow_wallet_overflow: false,
            },
          },
          { subscription: { id: 2, plan_id: 9, amount_total: 0, end_time: NOW - DAY, status: "expired" } },
          { subscription: { id: 1, plan_id: 4, status: "cancelled", end_time: NOW - 2 * DAY } },
        ],
      },
      catalog,
    );
    expect(read?.preference).toBe("subscription_first");
    expect(read?.plans.map((p) => [p.id, p.title, p.status, p.resetPeriod])).toEqual([
      [3, "Pro 月卡", "active", "daily"],
      [2, "自定义", "expired", "custom"],
      [1, null, "cancelled", null],
    ]);
    expect(read?.plans[0]).toMatchObject({ total: 1_500_000, used: 400_000, source: "balance", overflow: false });
    expect(read?.plans[1]?.resetSeconds).toBe(18_000);
    expect(plansOf({ billing_preference: "wallet_only", subscriptions: [] }, new Map())?.preference).toBe(
      "wallet_only",
    );
    expect(plansOf("nope", new Map())).toBeNull();
  });

  it("knows a request a plan paid by its log's billing_source", () => {
    expect(paidByPlan({ billing_source: "subscription", subscription_id: 3 })).toBe(true);
    expect(paidByPlan({ billing_source: "wallet" })).toBe(false);
    expect(paidByPlan({})).toBe(false);
  });
});

describe("runway: how long an account lasts at a pace, plans folded in", () => {
  it("is the wallet over the pace without plans, and nothing without spend", () => {
    expect(runway(10 * USD, 5 * USD, null, NOW)).toBeCloseTo(2, 9);
    expect(runway(10 * USD, 5 * USD, { preference: "subscription_first", plans: [] }, NOW)).toBeCloseTo(2, 9);
    expect(runway(10 * USD, 0, null, NOW)).toBeNull();
  });

  it("draws a daily plan first, the wallet for the rest of each day, the plan renewed at each reset", () => {
    // $1 left of today's $3 until the reset in 12 h, then $3 a day of the $5: the wallet pays $2 a day.
    const read = { preference: "subscription_first" as const, plans: [plan({ used: 2 * USD })] };
    // 0.2 d on the plan, 0.3 d on the wallet ($1.50), reset; 4 days of $2 ($8); then 0.6 d plan + 0.1 d of the last $0.50.
    expect(runway(10 * USD, 5 * USD, read, NOW)).toBeCloseTo(5.2, 9);
  });

  it("stops when a plan that forbids the wallet is used up, whatever the wallet holds", () => {
    const read = { preference: "subscription_first" as const, plans: [plan({ used: 2 * USD, overflow: false })] };
    expect(runway(100 * USD, 5 * USD, read, NOW)).toBeCloseTo(0.2, 9);
  });

  it("follows the preference: wallet first, wallet only, plans only", () => {
    const plans = [plan({ used: 2 * USD, nextReset: 0 })];
    expect(runway(10 * USD, 5 * USD, { preference: "wallet_only", plans }, NOW)).toBeCloseTo(2, 9);
    // The wallet's 2 days, then the plan's $1.
    expect(runway(10 * USD, 5 * USD, { preference: "wallet_first", plans }, NOW)).toBeCloseTo(2.2, 9);
    expect(runway(10 * USD, 5 * USD, { preference: "subscription_only", plans }, NOW)).toBeCloseTo(0.2, 9);
  });

  it("counts an unlimited plan to its end, then the wallet; ended and cancelled plans not at all", () => {
    const unlimited = plan({ total: 0, end: NOW + 10 * DAY, nextReset: 0 });
    expect(runway(10 * USD, 5 * USD, { preference: "subscription_first", plans: [unlimited] }, NOW)).toBeCloseTo(12, 9);
    const gone = [plan({ status: "expired" }), plan({ id: 2, status: "cancelled" }), plan({ id: 3, end: NOW - 1 })];
    expect(runway(10 * USD, 5 * USD, { preference: "subscription_first", plans: gone }, NOW)).toBeCloseTo(2, 9);
  });

  it("uses the soonest-ending plan first, and stops looking past its horizon", () => {
    const soon = plan({ id: 2, total: USD, used: 0, end: NOW + DAY / 4, nextReset: 0 });
    const later = plan({ id: 1, total: USD, used: 0, end: NOW + 5 * DAY, nextReset: 0 });
    // At $2 a day: the soon one pays until it ends (0.25 d, $0.50 of it unused), then the later one's $1 (0.5 d).
    expect(runway(0, 2 * USD, { preference: "subscription_only", plans: [later, soon] }, NOW)).toBeCloseTo(0.75, 9);
    const forever = plan({ total: 0, end: NOW + 100 * 365 * DAY, nextReset: 0 });
    expect(runway(0, USD, { preference: "subscription_first", plans: [forever] }, NOW)).toBeCloseTo(RUNWAY_MAX_DAYS, 9);
  });
});

describe("a plan's entries and alerts", () => {
  it("reads a plan bought from the wallet as spend, one paid outside as no move, others not at all", () => {
    expect(planPurchaseQuota("使用余额购买订阅成功，套餐: Pro，支付金额: 9.90，扣除额度: 4950000")).toBe(4_950_000);
    expect(planPurchaseQuota("订阅购买成功，套餐: Pro，支付金额: 9.90，支付方式: stripe")).toBe(0);
    expect(planPurchaseQuota("使用在线充值成功，充值金额: ＄10.000000 额度，支付金额：73")).toBeNull();
  });

  const facts = (plans: Facts["plans"], overcharged: Facts["overcharged"] = null): Facts => ({
    ...{ balanceUsd: 10, daysLeft: 5, spendTodayUsd: 1, refused: false, downMinutes: null, checkinProblem: null },
    ...{ unmatchedUsd: null, sameHourMedianUsd: null, priceRises: [], overcharged, plans },
  });
  const pro = { title: "Pro", endsInDays: 2.5, ends: "12-01 08:00", usedPct: 92.5, remainingUsd: 0.225 };

  it("tells of a plan ending soon and of one nearly used, the worst first", () => {
    const ending = check("plan_ending_within", 3, facts([pro, { ...pro, title: "Max", endsInDays: 0.2 }]));
    expect(ending).toEqual({
      holds: true,
      value: 0.2,
      text: "套餐「Max」将在 5 小时后到期（12-01 08:00），另有 1 个套餐",
    });
    expect(check("plan_ending_within", 2, facts([pro])).holds).toBe(false);
    const used = check("plan_used_above", 90, facts([pro, { ...pro, usedPct: null, title: "不限额" }]));
    expect(used).toEqual({ holds: true, value: 92.5, text: "套餐「Pro」本周期已用 92.5%，剩余 $0.2250" });
    expect(check("plan_used_above", 95, facts([pro])).holds).toBe(false);
  });

  it("tells of an overcharge by its share of the spend", () => {
    const over = check("overcharged_share_above", 2, facts([], { usd: 0.5, pct: 2.5 }));
    expect(over).toMatchObject({ holds: true, value: 2.5 });
    expect(check("overcharged_share_above", 3, facts([], { usd: 0.5, pct: 2.5 })).holds).toBe(false);
    expect(check("overcharged_share_above", 1, facts([], null)).holds).toBe(false);
  });
});
