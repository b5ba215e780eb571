import { describe, expect, it } from "vitest";
import { TOP_MODELS, balanceSeries, dailySeries } from "../../src/components/usage-series";

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
});
