import { describe, expect, it } from "vitest";
import { formatAmount, formatMoney, formatUsd } from "../../src/shared/money";

describe("the one money rule", () => {
  it("writes two decimals, up to four below 1, with the sign, the same for every currency", () => {
    expect(formatUsd(1234.5)).toBe("$1,234.50");
    expect(formatUsd(0.8657)).toBe("$0.8657");
    expect(formatUsd(0.5)).toBe("$0.50");
    expect(formatUsd(0.00004)).toBe("$0.00");
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
    expect(formatMoney(250_000, { quotaPerUnit: 500_000, display: "USD", symbol: "$", rate: 1 })).toBe("$0.50");
  });
});
