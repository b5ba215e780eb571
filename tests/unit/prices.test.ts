import { describe, expect, it } from "vitest";
import {
  fitPrice,
  parseGroupRatios,
  parsePrices,
  parseUserModels,
  priced,
  type FitSums,
} from "../../src/server/gateway/prices";

/**
 * Prices as the families publish them, against figures worked out by hand from
 * gateway-actions.md's formulas (new-api §2.5, one-hub §5), at the default 500,000 quota units a
 * dollar and at another.
 */

describe("new-api and Veloera prices (GET /api/pricing)", () => {
  const envelope = {
    success: true,
    data: [
      // The worked example of §2.5: $0.15 in, $0.60 out per 1M at group ratio 1.
      { model_name: "gpt-4o-mini", quota_type: 0, model_ratio: 0.075, completion_ratio: 4, enable_groups: ["default"] },
      {
        model_name: "claude-sonnet-4",
        quota_type: 0,
        model_ratio: 1.5,
        completion_ratio: 5,
        enable_groups: ["default", "vip"],
      },
      // Per call: model_price dollars a request.
      {
        model_name: "dall-e-3",
        quota_type: 1,
        model_ratio: 0,
        model_price: 0.04,
        completion_ratio: 0,
        enable_groups: ["vip"],
      },
      // No closed formula: left out.
      { model_name: "tiered", quota_type: 0, model_ratio: 1, billing_mode: "tiered_expr", billing_expr: "x" },
      // Hostile: a negative ratio, no name, a repeated name.
      { model_name: "bad", quota_type: 0, model_ratio: -1 },
      { quota_type: 0, model_ratio: 1 },
      { model_name: "gpt-4o-mini", quota_type: 0, model_ratio: 99 },
    ],
    group_ratio: { default: 1, vip: 0.9 },
  };

  it("normalises ratios to USD per 1M tokens and per call", () => {
    expect(parsePrices("new-api", envelope, 500_000)).toEqual([
      {
        model: "claude-sonnet-4",
        inputPerMillionUsd: 3,
        outputPerMillionUsd: 15,
        perCallUsd: null,
        groups: ["default", "vip"],
      },
      { model: "dall-e-3", inputPerMillionUsd: null, outputPerMillionUsd: null, perCallUsd: 0.04, groups: ["vip"] },
      {
        model: "gpt-4o-mini",
        inputPerMillionUsd: 0.15,
        outputPerMillionUsd: 0.6,
        perCallUsd: null,
        groups: ["default"],
      },
    ]);
  });

  it("follows a site's own quota units a dollar (the official page assumes 500,000)", () => {
    // 1,000,000 units a dollar: half the dollars for the same ratio; a per-call price is dollars already.
    const prices = parsePrices("veloera", envelope, 1_000_000);
    expect(prices.find((p) => p.model === "gpt-4o-mini")).toMatchObject({
      inputPerMillionUsd: 0.075,
      outputPerMillionUsd: 0.3,
    });
    expect(prices.find((p) => p.model === "dall-e-3")?.perCallUsd).toBe(0.04);
  });

  it("prices in the account's group: the ratio multiplies every figure", () => {
    const mini = parsePrices("new-api", envelope, 500_000).find((p) => p.model === "gpt-4o-mini")!;
    expect(priced(mini, 0.9)).toEqual({ inputPerMillionUsd: 0.135, outputPerMillionUsd: 0.54, perCallUsd: null });
    const dalle = parsePrices("new-api", envelope, 500_000).find((p) => p.model === "dall-e-3")!;
    expect(priced(dalle, 1.5).perCallUsd).toBe(0.06);
  });

  it("reads the groups' ratios, leaving out auto (picked per request)", () => {
    expect(
      parseGroupRatios({
        default: { ratio: 1, desc: "默认分组" },
        vip: { ratio: 0.9, desc: "vip分组" },
        auto: { ratio: "自动", desc: "自动选择" },
      }),
    ).toEqual({ default: 1, vip: 0.9 });
    expect(parseGroupRatios(envelope.group_ratio)).toEqual({ default: 1, vip: 0.9 });
  });
});

describe("one-hub and done-hub prices (GET /api/prices)", () => {
  const envelope = {
    success: true,
    data: [
      // Quota per token: 0.075 → $0.15 per 1M input; output 0.3 → $0.60.
      { model: "gpt-4o-mini", type: "tokens", channel_type: 1, input: 0.075, output: 0.3, locked: false },
      // A call costs 1000 × input quota: 20 → 20,000 units = $0.04.
      { model: "dall-e-3", type: "times", channel_type: 1, input: 20, output: 20, locked: false },
    ],
  };

  it("normalises quota per token and per call", () => {
    expect(parsePrices("one-hub", envelope, 500_000)).toEqual([
      { model: "dall-e-3", inputPerMillionUsd: null, outputPerMillionUsd: null, perCallUsd: 0.04, groups: null },
      { model: "gpt-4o-mini", inputPerMillionUsd: 0.15, outputPerMillionUsd: 0.6, perCallUsd: null, groups: null },
    ]);
    expect(parsePrices("done-hub", envelope, 250_000).find((p) => p.model === "gpt-4o-mini")).toMatchObject({
      inputPerMillionUsd: 0.3,
      outputPerMillionUsd: 1.2,
    });
  });

  it("reads the usable models from the map of model → groups, and the group map's ratios", () => {
    expect(parseUserModels({ "gpt-4o-mini": { groups: ["default"] }, "dall-e-3": { groups: ["vip"] } })).toEqual([
      "dall-e-3",
      "gpt-4o-mini",
    ]);
    expect(parseUserModels(["b", "a", "a", 7])).toEqual(["a", "b"]);
    expect(parseGroupRatios({ default: { id: 1, symbol: "default", ratio: 1 }, svip: { ratio: 0.5 } })).toEqual({
      default: 1,
      svip: 0.5,
    });
  });
});

describe("prices from the account's own log (one-api publishes none)", () => {
  /** The fit's sums over calls of [prompt, completion] at quota = ceil((p + c × cr) × mr × gr). */
  function sums(calls: Array<[number, number]>, quotaOf: (p: number, c: number) => number): FitSums {
    const s: FitSums = { n: 0, q: 0, p: 0, c: 0, qq: 0, pp: 0, cc: 0, pc: 0, qp: 0, qc: 0 };
    for (const [p, c] of calls) {
      const q = quotaOf(p, c);
      s.n++;
      s.q += q;
      s.p += p;
      s.c += c;
      s.qq += q * q;
      s.pp += p * p;
      s.cc += c * c;
      s.pc += p * c;
      s.qp += q * p;
      s.qc += q * c;
    }
    return s;
  }
  const calls: Array<[number, number]> = [
    [1200, 300],
    [5000, 800],
    [300, 1200],
    [8000, 100],
    [2500, 2500],
    [700, 40],
  ];

  it("recovers the input and output price from quota against tokens", () => {
    // one-api: model ratio 0.075, completion ratio 4, group ratio 1.5 → $0.225 in, $0.90 out per 1M.
    const fit = fitPrice(
      sums(calls, (p, c) => Math.ceil((p + c * 4) * 0.075 * 1.5)),
      500_000,
    );
    expect(fit?.perCallUsd).toBeNull();
    expect(fit?.inputPerMillionUsd).toBeCloseTo(0.225, 2);
    expect(fit?.outputPerMillionUsd).toBeCloseTo(0.9, 2);
  });

  it("prices per call when the quota never moves with the tokens, and input only without completions", () => {
    expect(
      fitPrice(
        sums(calls, () => 20_000),
        500_000,
      ),
    ).toEqual({
      inputPerMillionUsd: null,
      outputPerMillionUsd: null,
      perCallUsd: 0.04,
    });
    const embeddings: Array<[number, number]> = [
      [100, 0],
      [900, 0],
      [4000, 0],
    ];
    expect(
      fitPrice(
        sums(embeddings, (p) => p * 0.01),
        500_000,
      ),
    ).toEqual({
      inputPerMillionUsd: 0.02,
      outputPerMillionUsd: null,
      perCallUsd: null,
    });
  });

  it("says nothing from fewer than three calls, or completions always the same share of the prompt", () => {
    expect(
      fitPrice(
        sums(calls.slice(0, 2), (p, c) => p + c),
        500_000,
      ),
    ).toBeNull();
    const proportional: Array<[number, number]> = [
      [1000, 100],
      [2000, 200],
      [3000, 300],
    ];
    expect(
      fitPrice(
        sums(proportional, (p, c) => p + 4 * c),
        500_000,
      ),
    ).toBeNull();
  });
});
