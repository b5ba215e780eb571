import { describe, expect, it } from "vitest";
import { checkCharge, type CheckedEntry } from "../../src/server/gateway/charge-check";

/**
 * A charge recomputed as each gateway computes it (docs/design.md 27): the worked examples of
 * new-api's exact decimals and of one-hub's and done-hub's float arithmetic, and the entries a
 * log cannot tell enough about.
 */
const entry = (e: Partial<CheckedEntry>): CheckedEntry => ({
  type: "consume",
  quota: 0,
  promptTokens: 0,
  completionTokens: 0,
  content: "",
  detail: {},
  ...e,
});

describe("new-api", () => {
  const a = {
    model_ratio: 0.075,
    completion_ratio: 4,
    cache_ratio: 0.5,
    group_ratio: 1.5,
    user_group_ratio: -1,
    model_price: -1,
  };

  it("recomputes an OpenAI-style entry with cached tokens: 393.75 rounds to 394", () => {
    const e = entry({ quota: 394, promptTokens: 3000, completionTokens: 250, detail: { ...a, cache_tokens: 1000 } });
    expect(checkCharge(e, 500_000)).toEqual({ expected: 394, ok: true });
    expect(checkCharge({ ...e, quota: 450 }, 500_000)).toEqual({ expected: 394, ok: false });
  });

  it("recomputes an Anthropic-style entry, cache writes split into 5 minutes and 1 hour", () => {
    const detail = {
      model_ratio: 1.5,
      completion_ratio: 5,
      cache_ratio: 0.1,
      cache_creation_ratio: 1.25,
      cache_creation_ratio_5m: 1.25,
      cache_creation_ratio_1h: 2,
      group_ratio: 0.8,
      model_price: -1,
      usage_semantic: "anthropic",
      cache_tokens: 30_000,
      cache_creation_tokens: 5000,
      cache_creation_tokens_5m: 3000,
      cache_creation_tokens_1h: 2000,
    };
    expect(checkCharge(entry({ quota: 17_940, promptTokens: 200, completionTokens: 800, detail }), 500_000)).toEqual({
      expected: 17_940,
      ok: true,
    });
  });

  it("recomputes a per-call entry, and says when its count is not in the log", () => {
    const detail = { model_ratio: 0, completion_ratio: 0, group_ratio: 1, model_price: 0.04 };
    expect(checkCharge(entry({ quota: 20_000, promptTokens: 10, detail }), 500_000)).toEqual({
      expected: 20_000,
      ok: true,
    });
    expect(
      checkCharge(entry({ quota: 40_000, promptTokens: 10, detail, content: "生成数量 2" }), 500_000),
    ).toMatchObject({
      expected: null,
    });
  });

  it("charges at least 1 where the ratio is not 0, and nothing for an empty request", () => {
    const detail = { model_ratio: 0.0001, completion_ratio: 1, group_ratio: 1, model_price: -1 };
    expect(checkCharge(entry({ quota: 1, promptTokens: 3, detail }), 500_000)).toEqual({ expected: 1, ok: true });
    expect(checkCharge(entry({ quota: 0, detail }), 500_000)).toEqual({ expected: 0, ok: true });
  });

  it("never guesses: tiered expressions, tasks, tool surcharges and logs without ratios", () => {
    const details: CheckedEntry["detail"][] = [
      { ...a, billing_mode: "tiered_expr" },
      { ...a, is_task: true },
      { ...a, tool_surcharges: '[{"name":"web_search","count":1,"price":10}]' },
      { group: "default" },
    ];
    for (const detail of details) {
      expect(checkCharge(entry({ quota: 5, promptTokens: 10, detail }), 500_000)).toMatchObject({ expected: null });
    }
    expect(checkCharge(entry({ type: "topup", quota: 5 }), 500_000)).toBeNull();
  });
});

describe("one-hub and done-hub", () => {
  it("recomputes a Claude entry with cache reads and writes: 20175", () => {
    const detail = {
      price_type: "tokens",
      group_ratio: 1,
      input_ratio: 1.5,
      output_ratio: 7.5,
      cached_write_tokens: 5000,
      cached_write_tokens_ratio: 1.25,
      cached_read_tokens: 30_000,
      cached_read_tokens_ratio: 0.1,
    };
    expect(checkCharge(entry({ quota: 20_175, promptTokens: 35_200, completionTokens: 800, detail }), 500_000)).toEqual(
      {
        expected: 20_175,
        ok: true,
      },
    );
  });

  it("recomputes done-hub's one-hour cache writes at their default ratio: 17940", () => {
    const detail = {
      price_type: "tokens",
      group_ratio: 0.8,
      input_ratio: 1.5,
      output_ratio: 7.5,
      cached_write_tokens: 3000,
      cached_write_1h_tokens: 2000,
      cached_read_tokens: 30_000,
    };
    const e = entry({ quota: 17_940, promptTokens: 35_200, completionTokens: 800, detail });
    expect(checkCharge(e, 500_000)).toEqual({ expected: 17_940, ok: true });
    // A charge at the list's $3/$15 against ratios that say $2.40/$12 is told.
    expect(checkCharge({ ...e, quota: 22_425 }, 500_000)).toEqual({ expected: 17_940, ok: false });
  });

  it("charges a per-call model 1000 × its input ratio", () => {
    const detail = { price_type: "times", group_ratio: 1.2, input_ratio: 30, output_ratio: 0 };
    expect(checkCharge(entry({ quota: 36_000, promptTokens: 1, detail }), 500_000)).toEqual({
      expected: 36_000,
      ok: true,
    });
  });
});
