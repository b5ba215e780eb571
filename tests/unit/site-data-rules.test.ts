import { describe, expect, it } from "vitest";
import { dayIn, dayStart, dayStarts, isTimeZone, localMidnight, nextDay } from "../../src/server/core/time";
import { detectFamily, moneyFrom } from "../../src/server/gateway/families";
import { pageOf, paging } from "../../src/server/gateway/reads";
import { maskKey } from "../../src/server/gateway/credentials";

describe("family detection from /api/status (gateway-user-api.md §8)", () => {
  it.each([
    [{ quota_display_type: "USD", enable_data_export: true, setup: true }, "new-api"],
    [{ usd_exchange_rate: 7.3, enable_data_export: true }, "new-api"],
    [{ enable_data_export: true, setup: true, self_use_mode_enabled: false }, "new-api-legacy"],
    [{ check_in_enabled: false, enable_data_export: true, setup: true }, "veloera"],
    [{ oidc_well_known: "", lark_client_id: "", quota_per_unit: 500000 }, "one-api"],
    [{ PaymentUSDRate: 7.3, UserInvoiceMonth: false }, "one-hub"],
    [{ PaymentUSDRate: 7.3, linuxDo_oauth: false, max_log_query_days: 180 }, "done-hub"],
    [{ version: "v1", system_name: "x" }, "unknown"],
  ])("%j → %s", (status, family) => {
    expect(detectFamily(status)).toBe(family);
  });
});

describe("money settings", () => {
  it("follows the display recipe of §3.2", () => {
    expect(moneyFrom({})).toEqual({ quotaPerUnit: 500_000, display: "USD", symbol: "$", rate: 1 });
    expect(moneyFrom({ quota_display_type: "CNY" })).toEqual({
      quotaPerUnit: 500_000,
      display: "CNY",
      symbol: "¥",
      rate: 7.3,
    });
    expect(moneyFrom({ quota_display_type: "TOKENS", quota_per_unit: 1000 })).toEqual({
      quotaPerUnit: 1000,
      display: "TOKENS",
      symbol: "",
      rate: 1,
    });
    // Nonsense from a site falls back to the defaults rather than dividing by zero.
    expect(moneyFrom({ quota_per_unit: 0, quota_display_type: "CUSTOM", custom_currency_exchange_rate: -1 })).toEqual({
      quotaPerUnit: 500_000,
      display: "CUSTOM",
      symbol: "¤",
      rate: 1,
    });
  });
});

describe("key masking", () => {
  it("keeps 4 + 4 of a full or already-masked key, and hides short ones whole", () => {
    expect(maskKey("q7Yk0pD2ZzfZ9mB3n1vJ8sLxC4eR6tHaWuG5oNiPbKcMdQhT")).toBe("q7Yk****dQhT");
    expect(maskKey("AbCd**********WxYz")).toBe("AbCd****WxYz");
    expect(maskKey("sk-123456789")).toBe("****");
    expect(maskKey("")).toBe("****");
  });
});

describe("page shapes", () => {
  it("reads a plain array, {items,total} and {data,total_count}", () => {
    expect(pageOf([{ a: 1 }])).toEqual({ rows: [{ a: 1 }], total: null, shape: "array" });
    expect(pageOf({ items: [{ a: 1 }], total: 7 })).toEqual({ rows: [{ a: 1 }], total: 7, shape: "items" });
    expect(pageOf({ data: [], total_count: 0 })).toEqual({ rows: [], total: 0, shape: "data" });
    expect(pageOf({ rows: [] })).toBeNull();
    expect(pageOf("oops")).toBeNull();
  });

  it("says whether there is more from the total, or from a full page", () => {
    expect(paging(2, 20, 20, 41)).toEqual({ page: 2, pageSize: 20, total: 41, hasMore: true });
    expect(paging(3, 20, 1, 41)).toEqual({ page: 3, pageSize: 20, total: 41, hasMore: false });
    expect(paging(1, 10, 10, null).hasMore).toBe(true);
    expect(paging(1, 10, 9, null).hasMore).toBe(false);
  });
});

describe("local midnight", () => {
  it("is the zone's own midnight, across daylight saving changes", () => {
    const at = Date.parse("2026-11-22T03:30:00Z");
    expect(new Date(localMidnight("Asia/Shanghai", at)).toISOString()).toBe("2026-11-21T16:00:00.000Z");
    expect(new Date(localMidnight("UTC", at)).toISOString()).toBe("2026-11-22T00:00:00.000Z");
    // New York leaves daylight saving at 02:00 on 2026-11-01: that day began at 04:00Z (EDT).
    const afterChange = Date.parse("2026-11-01T20:00:00Z");
    expect(new Date(localMidnight("America/New_York", afterChange)).toISOString()).toBe("2026-11-01T04:00:00.000Z");
    // …and it enters it on 2026-03-08: that day began at 05:00Z (EST).
    expect(new Date(localMidnight("America/New_York", Date.parse("2026-03-08T18:00:00Z"))).toISOString()).toBe(
      "2026-03-08T05:00:00.000Z",
    );
  });

  it("gives every calendar day's start, one a day, across daylight saving changes", () => {
    const iso = (tz: string, from: string, to: string) =>
      dayStarts(tz, from, to).map((d) => `${d.day} ${new Date(d.start).toISOString()}`);
    expect(iso("America/New_York", "2026-10-31", "2026-11-01")).toEqual([
      "2026-10-31 2026-10-31T04:00:00.000Z",
      "2026-11-01 2026-11-01T04:00:00.000Z",
      "2026-11-02 2026-11-02T05:00:00.000Z",
    ]);
    // Every day of a year in zones with odd offsets and changes agrees with the day-by-day rule.
    for (const tz of ["Asia/Shanghai", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Apia"]) {
      let day = "2025-01-01";
      for (const d of dayStarts(tz, "2025-01-01", "2025-12-31")) {
        expect([d.day, d.start], tz).toEqual([day, dayStart(tz, day)]);
        expect(dayIn(tz, d.start), tz).toBe(day);
        day = nextDay(day);
      }
    }
  });

  it("knows zone names", () => {
    expect(isTimeZone("Asia/Shanghai")).toBe(true);
    expect(isTimeZone("Mars/Olympus")).toBe(false);
  });
});
