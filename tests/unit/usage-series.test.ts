import { describe, expect, it } from "vitest";
import { TOP_MODELS, balanceSeries, byPeriod, countAxis, dailySeries } from "../../src/components/usage-series";
import { browserZone, day, fromZone, inZone, PRESETS, setPageZone, zone } from "../../src/components/usage-range";

describe("the series of 用量分析", () => {
  it("stacks the top models' spend per day and sums the rest as 其他", () => {
    const models = Array.from({ length: TOP_MODELS + 2 }, (_, i) => `m${i}`);
    const split = Object.fromEntries(models.map((m, i) => [m, i + 1]));
    const { points, stacked } = dailySeries(
      [{ key: "2026-11-02", requests: 5, promptTokens: 10, completionTokens: 3, split }],
      models,
    );
    expect(stacked).toEqual([...models.slice(0, TOP_MODELS), "其他"]);
    expect(points).toEqual([
      {
        day: "11-02",
        requests: 5,
        promptTokens: 10,
        completionTokens: 3,
        ...Object.fromEntries(models.slice(0, TOP_MODELS).map((m, i) => [m, i + 1])),
        其他: TOP_MODELS + 1 + TOP_MODELS + 2,
      },
    ]);
    expect(dailySeries([{ key: "2026-11-03", requests: 0, promptTokens: 0, completionTokens: 0 }], []).stacked).toEqual(
      [],
    );
  });

  it("puts every account's balance of a day on one point, oldest day first", () => {
    expect(
      balanceSeries([
        {
          series: [
            { day: "2026-11-03", usd: 5 },
            { day: "2026-11-01", usd: 7 },
          ],
        },
        { series: [{ day: "2026-11-01", usd: 2 }] },
      ]),
    ).toEqual([
      { day: "11-01", a0: 7, a1: 2 },
      { day: "11-03", a0: 5 },
    ]);
  });

  it("draws nothing for the hours of today that have not come, not a zero", () => {
    const hour = (h: string, requests: number) => ({
      key: `2026-11-27 ${h}:00`,
      requests,
      promptTokens: 0,
      completionTokens: 0,
    });
    const { points } = dailySeries([hour("10", 3), hour("11", 0), hour("12", 0)], [], "2026-11-27 11:43");
    expect(points.map((p) => p.requests)).toEqual([3, 0, undefined]);
    expect(points[2]).toEqual({ day: "11-27 12:00" });
  });

  it("writes every tick of a count axis in the one unit its largest value needs", () => {
    const wide = countAxis(180_000);
    expect([0, 45_000, 90_000, 180_000].map(wide)).toEqual(["0", "4.5万", "9万", "18万"]);
    const small = countAxis(90_000);
    expect([0, 25_000, 100_000].map(small)).toEqual(["0", "25,000", "100,000"]);
    expect(countAxis(3.2e8)(1.5e8)).toBe("1.5亿");
  });
});

describe("the page's zone", () => {
  const at = new Date("2026-11-27T18:30:00Z");

  it("reads days and times in a workspace's zone once the page is set to it, in the browser's otherwise", () => {
    const window = globalThis as { window?: unknown };
    window.window = globalThis;
    try {
      setPageZone("Asia/Shanghai");
      expect(inZone(at)).toBe("2026-11-28 02:30:00");
      expect(day(0, at)).toBe("2026-11-28");
      expect(day(-1, at)).toBe("2026-11-27");
      expect(fromZone("2026-11-28T02:30").toISOString()).toBe(at.toISOString());
      expect(PRESETS.find((p) => p.key === "last-month")!.range().from).toMatch(/^\d{4}-\d{2}-01$/);
      setPageZone(null);
      expect(zone()).toBe(browserZone());
    } finally {
      setPageZone(null);
      delete window.window;
    }
  });
});

describe("byPeriod", () => {
  const row = (key: string, usd: number, split: Record<string, number> = {}) => ({
    key,
    requests: 2,
    promptTokens: 10,
    completionTokens: 5,
    usd,
    split,
  });
  const days = [
    row("2026-11-29", 1, { a: 1 }), // a Sunday: the week from Monday 11-23
    row("2026-11-30", 2, { a: 1.5, b: 0.5 }), // a Monday: a new week, and the last day of November
    row("2026-12-01", 4, { b: 4 }),
  ];

  it("sums the days of each week under its Monday, and of each month under the month", () => {
    expect(byPeriod(days, "week").map((r) => [r.key, r.requests, r.usd, r.split])).toEqual([
      ["2026-11-23", 2, 1, { a: 1 }],
      ["2026-11-30", 4, 6, { a: 1.5, b: 4.5 }],
    ]);
    expect(byPeriod(days, "month").map((r) => [r.key, r.promptTokens, r.usd])).toEqual([
      ["2026-11", 20, 3],
      ["2026-12", 10, 4],
    ]);
    expect(byPeriod(days, "day")).toBe(days);
  });

  it("labels a month as it is and a week by its Monday's month and day", () => {
    expect(dailySeries(byPeriod(days, "month"), ["a", "b"]).points.map((p) => p.day)).toEqual(["2026-11", "2026-12"]);
    expect(dailySeries(byPeriod(days, "week"), ["a", "b"]).points.map((p) => p.day)).toEqual(["11-23", "11-30"]);
  });
});
