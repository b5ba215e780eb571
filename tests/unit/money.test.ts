import { describe, expect, it } from "vitest";
import { formatAmount, formatCount, formatMoney, formatUsd } from "../../src/shared/money";
import { topupQuota } from "../../src/shared/log-types";

describe("the one money rule", () => {
  it("writes two decimals, up to four below 1, with the sign, the same for every currency", () => {
    expect(formatUsd(1234.5)).toBe("$1,234.50");
    expect(formatUsd(0.8657)).toBe("$0.8657");
    expect(formatUsd(0.5)).toBe("$0.5000");
    expect(formatUsd(0.012)).toBe("$0.0120");
    expect(formatUsd(0.99999)).toBe("$1.00");
    expect(formatUsd(0.00004)).toBe("$0.0000");
    expect(formatUsd(-0.00004)).toBe("$0.0000");
    expect(formatUsd(0)).toBe("$0.00");
    expect(formatUsd(-0.0123)).toBe("-$0.0123");
    expect(formatUsd(-12.5)).toBe("-$12.50");
    expect(formatAmount(0.0012, "¥")).toBe("¥0.0012");
    expect(formatAmount(219, "¥")).toBe("¥219.00");
  });

  it("writes quota the site's way: its currency at its rate, or raw quota", () => {
    const cny = { quotaPerUnit: 500_000, display: "CNY" as const, symbol: "¥", rate: 7.3 };
    expect(formatMoney(1_000_000, cny)).toBe("¥14.60");
    expect(formatMoney(500, cny)).toBe("¥0.0073");
    expect(formatMoney(1_234_567, { ...cny, display: "TOKENS", symbol: "" })).toBe("1,234,567 额度");
    expect(formatMoney(250_000, { quotaPerUnit: 500_000, display: "USD", symbol: "$", rate: 1 })).toBe("$0.5000");
  });
});

describe("counts and top-ups", () => {
  it("writes large counts in 万 and 亿", () => {
    expect(formatCount(99_999)).toBe("99,999");
    expect(formatCount(123_456)).toBe("12.35万");
    expect(formatCount(50_000_000)).toBe("5,000万");
    expect(formatCount(320_000_000)).toBe("3.2亿");
  });

  it("reads a top-up's amount from its text when the site wrote quota 0", () => {
    expect(topupQuota(0, "通过兑换码充值 ＄10.000000 额度，兑换码ID 5", 500_000)).toBe(5_000_000);
    expect(topupQuota(0, "使用在线充值成功，充值金额: ＄30.500000 额度，支付金额：219.000000", 500_000)).toBe(
      15_250_000,
    );
    expect(topupQuota(0, "通过兑换码充值 5000000 点额度，兑换码ID 5", 500_000)).toBe(5_000_000);
    expect(topupQuota(1234, "通过兑换码充值 ＄10.000000 额度", 500_000)).toBe(1234);
    expect(topupQuota(0, "管理员调整", 500_000)).toBe(null);
  });
});
