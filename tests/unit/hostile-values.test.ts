import { describe, expect, it } from "vitest";
import { FAMILIES, moneyFrom, profileFrom } from "../../src/server/gateway/families";
import { logItem, logItemInBounds, selfInfo, tokenItem, topupItem } from "../../src/server/gateway/reads";
import { checkCharge } from "../../src/server/gateway/charge-check";
import { cacheFigures } from "../../src/server/gateway/cache-figures";
import { listCharge } from "../../src/server/gateway/list-check";
import { parseGroupRatios, parsePrices } from "../../src/server/gateway/prices";
import { RUNWAY_MAX_DAYS, planCatalog, plansOf, runway, type Plan } from "../../src/server/gateway/plans";
import { planPurchaseQuota, topupQuota } from "../../src/shared/log-types";
import { commentText, envLine } from "../../src/server/actions/client-config";

const DAY = 86_400;
const NOW = 1_790_000_000;
const USD = 500_000;
const MONEY = moneyFrom({});
const HOSTILE = [1e308, -1e308, 1e300, 1e16, 2 ** 53 + 1];

const consume = (detail: Record<string, string | number | boolean>, over: Record<string, unknown> = {}) => ({
  type: "consume",
  quota: 1000,
  promptTokens: 100,
  completionTokens: 10,
  content: "",
  detail,
  ...over,
});

describe("a hostile site's money settings", () => {
  it("reads a quota_per_unit or an exchange rate outside its bounds as the family's default", () => {
    for (const v of [1e-300, 0, -5, 1e300, Infinity]) {
      expect(moneyFrom({ quota_per_unit: v }).quotaPerUnit).toBe(500_000);
      expect(moneyFrom({ quota_display_type: "CNY", usd_exchange_rate: v }).rate).toBe(7.3);
      expect(moneyFrom({ quota_display_type: "CUSTOM", custom_currency_exchange_rate: v }).rate).toBe(1);
    }
    expect(moneyFrom({ quota_per_unit: 1_000_000 }).quotaPerUnit).toBe(1_000_000);
    expect(moneyFrom({ quota_per_unit: 1 }).quotaPerUnit).toBe(1);
    expect(profileFrom({ quota_per_unit: 1e-300, quota_display_type: "USD" }).money.quotaPerUnit).toBe(500_000);
  });
});

describe("a hostile site's numbers in every family's reads", () => {
  it("keeps a balance, a used quota or a count outside its bounds as unknown, never as zero", () => {
    for (const v of HOSTILE) {
      const info = selfInfo({ id: 1, quota: v, used_quota: v, request_count: v });
      expect([info.quota, info.usedQuota, info.requestCount]).toEqual([null, null, null]);
    }
    expect(selfInfo({ quota: 5e14, used_quota: 12, request_count: 3 })).toMatchObject({ quota: 5e14, usedQuota: 12 });
    expect(selfInfo({}).quota).toBe(0);
  });

  it("leaves out of a live page an entry whose quota, tokens or duration are outside their bounds, in every family", () => {
    for (const family of FAMILIES) {
      expect(logItemInBounds(logItem(family, { type: 2, quota: 1000, prompt_tokens: 10 }, MONEY))).toBe(true);
      for (const v of HOSTILE) {
        for (const field of ["quota", "prompt_tokens", "completion_tokens"]) {
          const item = logItem(family, { type: 2, quota: 1000, [field]: v }, MONEY);
          expect(logItemInBounds(item), `${family} ${field} ${v}`).toBe(false);
        }
      }
      expect(logItemInBounds(logItem(family, { type: 2, quota: 1.5 }, MONEY))).toBe(false);
    }
    expect(logItemInBounds(logItem("new-api", { type: 2, use_time: 1e300 }, MONEY))).toBe(false);
  });

  it("shows a key's quota or a top-up's amount outside its bounds as unknown", () => {
    for (const v of HOSTILE) {
      const key = tokenItem({ id: 1, name: "k", key: "sk-abcdefghijklmnop", remain_quota: v, used_quota: v }, MONEY);
      expect([key.remainQuota, key.remainUsd, key.usedQuota, key.usedUsd]).toEqual([null, null, null, null]);
      const topup = topupItem({ amount: v, money: v, status: "success" });
      expect([topup.amountUsd, topup.money]).toEqual([null, null]);
    }
    // new-api's largest key limit (1e9 × quota_per_unit) is a value.
    expect(tokenItem({ id: 1, remain_quota: 5e14 }, MONEY).remainUsd).toBe(1e9);
  });

  it("reads no amount from a top-up's text that no sum can hold", () => {
    const digits = "9".repeat(400);
    expect(topupQuota(0, `通过兑换码充值 ＄${digits} 额度`, USD)).toBeNull();
    expect(topupQuota(0, `使用在线充值成功，充值金额: ${digits} 点额度`, USD)).toBeNull();
    expect(topupQuota(0, "通过兑换码充值 ＄2000000000 额度", USD)).toBeNull();
    expect(topupQuota(1e308, "", USD)).toBeNull();
    expect(planPurchaseQuota(`使用余额购买订阅成功，套餐: Pro，支付金额: 9.90，扣除额度: ${digits}`)).toBeNull();
    expect(topupQuota(0, "通过兑换码充值 ＄10.000000 额度", USD)).toBe(10 * USD);
    expect(topupQuota(0, "使用在线充值成功，充值金额: 5000000 点额度", USD)).toBe(5_000_000);
  });

  it("drops a listed model whose ratio or price is outside its bounds, in new-api's and one-hub's lists", () => {
    const newApi = parsePrices(
      "new-api",
      {
        data: [
          { model_name: "huge", quota_type: 0, model_ratio: 1e308, completion_ratio: 1 },
          { model_name: "per-call", quota_type: 1, model_price: 1e300 },
          { model_name: "fine", quota_type: 0, model_ratio: 1.5, completion_ratio: 4 },
        ],
      },
      USD,
    );
    expect(newApi.map((p) => p.model)).toEqual(["fine"]);
    const hub = parsePrices("one-hub", { data: [{ model: "huge", input: 1e308, output: 1 }] }, USD);
    expect(hub).toEqual([]);
    expect(parseGroupRatios({ vip: 1e308, default: 1 })).toEqual({ default: 1 });
  });
});

describe("a hostile entry's arithmetic", () => {
  it("cannot be checked when a ratio, a price or a token count is outside its bounds, in both families' arithmetic", () => {
    const cases: Array<Record<string, string | number | boolean>> = [
      { model_ratio: 1e308, group_ratio: 1, completion_ratio: 1 },
      { model_ratio: 1, group_ratio: 1e300, completion_ratio: 1 },
      { model_ratio: 1, group_ratio: 1, completion_ratio: 1, cache_tokens: 1e300, cache_ratio: 0.1 },
      { model_price: 1e308, group_ratio: 1 },
      { price_type: "tokens", input_ratio: 1e308, output_ratio: 1, group_ratio: 1 },
      { price_type: "tokens", input_ratio: 1, output_ratio: 1, group_ratio: 1, cached_tokens: 1e300 },
    ];
    for (const detail of cases) {
      const checked = checkCharge(consume(detail), USD);
      expect(checked, JSON.stringify(detail)).toMatchObject({ expected: null });
      expect(checked && "reason" in checked ? checked.reason : "").toContain("超出合理范围");
      const list = listCharge(
        consume(detail),
        USD,
        { inputPerM: 1, outputPerM: 1, perCall: null },
        {
          name: "default",
          ratio: 1,
        },
      );
      expect(list).toMatchObject({ expected: null });
    }
  });

  it("cannot be checked when bounded figures multiply past what an hour's sums hold", () => {
    const detail = { model_ratio: 1e6, group_ratio: 1e6, completion_ratio: 1 };
    expect(checkCharge(consume(detail, { promptTokens: 1e12 }), USD)).toMatchObject({ expected: null });
    expect(cacheFigures(consume({ ...detail, cache_tokens: 1e12, cache_ratio: 0.1 }, { promptTokens: 1e12 }))).toBe(
      null,
    );
  });

  it("checks an ordinary entry as before", () => {
    const detail = { model_ratio: 1.5, group_ratio: 1, completion_ratio: 4 };
    // (100 + 10 × 4) × 1.5 = 210
    expect(checkCharge(consume(detail, { quota: 210 }), USD)).toEqual({ expected: 210, ok: true });
  });
});

const plan = (over: Partial<Plan> = {}): Plan => ({
  ...{ id: 1, planId: 7, title: "Pro", status: "active", source: "order", total: 3 * USD, used: 0 },
  ...{ start: NOW - DAY, end: NOW + 30 * DAY, nextReset: NOW + DAY / 2, lastReset: NOW - DAY / 2 },
  ...{ resetPeriod: "daily", resetSeconds: null, overflow: true },
  ...over,
});

describe("a hostile site's plans", () => {
  it("reads a custom reset under an hour (or past ten years) as an unknown period", () => {
    const catalog = planCatalog([
      { plan: { id: 1, quota_reset_period: "custom", quota_reset_custom_seconds: 1 } },
      { plan: { id: 2, quota_reset_period: "custom", quota_reset_custom_seconds: 1e300 } },
      { plan: { id: 3, quota_reset_period: "custom", quota_reset_custom_seconds: 18_000 } },
    ]);
    expect([...catalog.values()].map((p) => [p.resetPeriod, p.resetSeconds])).toEqual([
      [null, null],
      [null, null],
      ["custom", 18_000],
    ]);
  });

  it("keeps no subscription whose quota figures are outside their bounds", () => {
    const read = plansOf(
      {
        all_subscriptions: [
          { subscription: { id: 1, plan_id: 1, amount_total: 1e308, status: "active", end_time: NOW + DAY } },
          { subscription: { id: 2, plan_id: 1, amount_used: -1e300, status: "active", end_time: NOW + DAY } },
          { subscription: { id: 3, plan_id: 1, amount_total: USD, status: "active", end_time: NOW + DAY } },
        ],
      },
      new Map(),
    );
    expect(read?.plans.map((p) => p.id)).toEqual([3]);
  });

  it("takes a plan kept with a one-second reset (before the bounds) as one that resets no more", () => {
    const kept = plan({ resetPeriod: "custom", resetSeconds: 1, nextReset: NOW + 1, end: NOW + 3650 * DAY });
    // The reset the site named (a second away) once, $3, then the wallet's $10 at $5 a day.
    expect(runway(10 * USD, 5 * USD, { preference: "subscription_first", plans: [kept] }, NOW)).toBeCloseTo(2.6, 4);
  });

  it("steps an hourly plan over ten years to the runway the closed form gives", () => {
    // $0.10 an hour of the plan against $4.80 a day: the plan pays half, the wallet $2.40 a day.
    const hourly = plan({
      total: USD / 10,
      resetPeriod: "custom",
      resetSeconds: 3600,
      nextReset: NOW + 3600,
      lastReset: NOW,
      end: NOW + 20 * 365 * DAY,
    });
    const days = runway(2400 * USD, 4.8 * USD, { preference: "subscription_first", plans: [hourly] }, NOW);
    expect(days).toBeCloseTo(1000, 0);
    const forever = runway(1e6 * USD, 2 * USD, { preference: "subscription_first", plans: [hourly] }, NOW);
    expect(forever).toBe(RUNWAY_MAX_DAYS);
  });

  it("applies resets missed since 1970 in closed form", () => {
    const stale = plan({ used: 3 * USD, resetPeriod: "custom", resetSeconds: 3600, nextReset: 1, end: NOW + DAY });
    // The reset due since 1970 renews the window at once: $3 at $24 a day is 3 hours, renewed every hour.
    expect(runway(0, 24 * USD, { preference: "subscription_only", plans: [stale] }, NOW)).toBeCloseTo(1, 6);
  });
});

describe("a value in a .env line", () => {
  it("is written plain when it is one word, else quoted with every break and quote escaped", () => {
    expect(envLine("KEY", "sk-abc_123")).toBe("KEY=sk-abc_123");
    expect(envLine("URL", "https://a.example/v1")).toBe("URL=https://a.example/v1");
    const hostile = envLine("KEY", 'a\nOPENAI_BASE_URL=https://evil "$HOME" `x` \\');
    expect(hostile.split("\n")).toHaveLength(1);
    expect(hostile).toBe('KEY="a\\nOPENAI_BASE_URL=https://evil \\"\\$HOME\\" \\`x\\` \\\\"');
    expect(commentText("名字\r\nOPENAI_API_KEY=evil\u2028x")).toBe("名字  OPENAI_API_KEY=evil x");
  });
});
