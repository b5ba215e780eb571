/**
 * A consume entry's charge, recomputed from its own tokens and ratios exactly as its gateway
 * computes it (docs/design.md 27), where the entry says enough; otherwise why not, never a guess.
 *
 * - new-api and its forks (ratios in `other`: `model_ratio`, `group_ratio`, `completion_ratio`,
 *   `model_price`, the cache fields): exact decimal arithmetic, rounded half away from zero, at
 *   least 1 where the ratio is not 0 (`service/text_quota.go`).
 * - one-hub and done-hub (`metadata`: `price_type`, `input_ratio`, `output_ratio`, `group_ratio`,
 *   each extra-token key with its `_ratio`): float64 as the gateway does it, the extra tokens'
 *   adjustments truncated per key, the total rounded up (`relay_util/quota.go`).
 */
import { add, dec, max0, mul, roundHalfAway, sign, sub, type Dec } from "../../shared/decimal";
import { BOUNDS, saneEntryFigure } from "../../shared/bounds";

export type ChargeCheck = { expected: number; ok: boolean } | { expected: null; reason: string };

type Detail = Record<string, string | number | boolean>;
export type CheckedEntry = {
  type: string;
  quota: number;
  promptTokens: number;
  completionTokens: number;
  content: string;
  detail: Detail;
};

/** Past this many extra fields an entry's detail may have been cut short: not checked. */
export const CHECK_DETAIL_MAX = 48;

// ── reading the detail ─────────────────────────────────────────────────────────────────────────

/** A number the detail holds under `k` (sites send some as text); null when it holds none. */
export const num = (d: Detail, k: string): number | null => {
  const v = d[k];
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
};
/** A token count the detail holds under `k`: a whole number, 0 when none. */
export const tokens = (d: Detail, k: string) => Math.max(0, Math.trunc(num(d, k) ?? 0));

const UNKNOWN = {
  ratios: "日志没有记录倍率，无法核对",
  tiered: "按表达式分段计费，日志不足以复算",
  task: "异步任务的计费由站点事后调整，无法按单条日志核对",
  tools: "含工具调用附加费，日志未完整记录，无法核对",
  otherRatios: "按次计费的生成数量等倍率未记录在日志中，无法核对",
  audio: "音频计费，日志不足以复算",
  cut: "日志附带的字段过多，无法完整核对",
  range: "日志中的倍率、价格或 tokens 超出合理范围，无法核对",
} as const;

const RATIO_KEY = /ratio|price/;
const TOKENS_KEY = /tokens|token_count|image_output/;

/**
 * Whether a figure the arithmetic reads is outside its bounds (docs/design.md 29): a ratio or price
 * past BOUNDS.ratio, a token count past BOUNDS.tokens. Such an entry cannot be checked; its
 * arithmetic is never taken (a ratio of 1e308 is no decimal any sum can hold).
 */
function outOfRange(e: CheckedEntry): boolean {
  if (!(Math.abs(e.promptTokens) <= BOUNDS.tokens && Math.abs(e.completionTokens) <= BOUNDS.tokens)) return true;
  if (!(Math.abs(e.quota) <= BOUNDS.entryQuota)) return true;
  for (const k of Object.keys(e.detail)) {
    const n = num(e.detail, k);
    if (n === null) continue;
    if (RATIO_KEY.test(k) && Math.abs(n) > BOUNDS.ratio) return true;
    if (TOKENS_KEY.test(k) && Math.abs(n) > BOUNDS.tokens) return true;
  }
  return false;
}

function newApi(e: CheckedEntry, qpu: number): ChargeCheck {
  const d = e.detail;
  const modelRatio = num(d, "model_ratio");
  const groupRatio = num(d, "group_ratio");
  const completionRatio = num(d, "completion_ratio") ?? 0;
  const modelPrice = num(d, "model_price") ?? -1;
  if (groupRatio === null || (modelRatio === null && modelPrice < 0)) return { expected: null, reason: UNKNOWN.ratios };
  if (d.billing_mode === "tiered_expr") return { expected: null, reason: UNKNOWN.tiered };
  if (d.is_task === true) return { expected: null, reason: UNKNOWN.task };
  if (d.audio === true) return { expected: null, reason: UNKNOWN.audio };
  if (d.tool_surcharges !== undefined) return { expected: null, reason: UNKNOWN.tools };
  const gr = dec(groupRatio);
  const ratio = mul(dec(modelRatio ?? 0), gr);
  const Q = dec(qpu);
  let q: Dec;
  if (modelPrice < 0) {
    const anth = d.usage_semantic === "anthropic";
    const cc5m = tokens(d, "cache_creation_tokens_5m");
    const cc1h = tokens(d, "cache_creation_tokens_1h");
    const legacy = !anth && (cc5m > 0 || cc1h > 0) && d.input_tokens_total === undefined;
    const split = !anth && !legacy;
    let base = dec(e.promptTokens);
    let extra: Dec = { n: 0n, s: 0 };
    const cacheTokens = tokens(d, "cache_tokens");
    if (cacheTokens > 0) {
      if (split) base = sub(base, dec(cacheTokens));
      extra = add(extra, mul(dec(cacheTokens), dec(num(d, "cache_ratio") ?? 1)));
    }
    const cct = tokens(d, "cache_creation_tokens");
    if (cct > 0 || cc5m > 0 || cc1h > 0) {
      const ccr = dec(num(d, "cache_creation_ratio") ?? 1);
      if (split) {
        base = sub(base, dec(cct));
        extra = add(extra, mul(dec(cct), ccr));
      } else {
        const rest = Math.max(0, cct - cc5m - cc1h);
        extra = add(extra, mul(dec(rest), ccr));
        extra = add(
          extra,
          mul(dec(cc5m), dec(num(d, "cache_creation_ratio_5m") ?? num(d, "cache_creation_ratio") ?? 1)),
        );
        extra = add(extra, mul(dec(cc1h), dec(num(d, "cache_creation_ratio_1h") ?? 1)));
      }
    }
    const imageTokens = tokens(d, "image_output");
    if (imageTokens > 0) {
      base = sub(base, dec(imageTokens));
      extra = add(extra, mul(dec(imageTokens), dec(num(d, "image_ratio") ?? 1)));
    }
    let audio: Dec = { n: 0n, s: 0 };
    if (d.audio_input_seperate_price === true) {
      const count = tokens(d, "audio_input_token_count");
      base = sub(base, dec(count));
      // audio_input_price per 1M tokens, in USD.
      audio = mul(mul(mul(dec(num(d, "audio_input_price") ?? 0), dec(count)), gr), Q);
      audio = { n: audio.n, s: audio.s + 6 };
    }
    const input = add(max0(base), extra);
    q = add(mul(add(input, mul(dec(e.completionTokens), dec(completionRatio))), ratio), audio);
    if (sign(ratio) !== 0 && sign(q) <= 0) q = { n: 1n, s: 0 };
  } else {
    // Per call: an image's count ("生成数量") or other multipliers are not in the log.
    if (/生成数量/.test(e.content)) return { expected: null, reason: UNKNOWN.otherRatios };
    q = mul(mul(dec(modelPrice), Q), gr);
  }
  let expected = roundHalfAway(q);
  if (e.promptTokens + e.completionTokens === 0) expected = 0;
  else if (sign(ratio) !== 0 && expected === 0) expected = 1;
  return { expected, ok: expected === e.quota };
}

/** one-hub's and done-hub's extra-token keys, the prompt side, and their default ratios. */
const HUB_EXTRA = [
  "cached_tokens",
  "cached_write_tokens",
  "cached_read_tokens",
  "cached_write_1h_tokens",
  "openai_cache_write_tokens",
  "input_audio_tokens",
  "output_audio_tokens",
  "reasoning_tokens",
  "input_text_tokens",
  "output_text_tokens",
  "input_image_tokens",
  "output_image_tokens",
];
const HUB_PROMPT_SIDE = new Set([
  "cached_tokens",
  "cached_write_tokens",
  "cached_read_tokens",
  "cached_write_1h_tokens",
  "openai_cache_write_tokens",
  "input_audio_tokens",
  "input_text_tokens",
  "input_image_tokens",
]);
const HUB_DEFAULT_RATIO: Record<string, number> = {
  cached_write_tokens: 1.25,
  cached_read_tokens: 0.1,
  cached_write_1h_tokens: 2,
  openai_cache_write_tokens: 1.25,
};

function oneHub(e: CheckedEntry): ChargeCheck {
  const d = e.detail;
  const gr = num(d, "group_ratio");
  const input = num(d, "input_ratio");
  if (gr === null || input === null) return { expected: null, reason: UNKNOWN.ratios };
  if (d.extra_billing !== undefined) return { expected: null, reason: UNKNOWN.tools };
  let inR = input * gr;
  let outR = (num(d, "output_ratio") ?? 0) * gr;
  const lcIn = num(d, "long_context_input_ratio");
  const lcOut = num(d, "long_context_output_ratio");
  if (lcIn !== null) inR *= lcIn;
  if (lcOut !== null) outR *= lcOut;
  let p = e.promptTokens;
  let c = e.completionTokens;
  for (const key of HUB_EXTRA) {
    const t = num(d, key);
    if (t === null) continue;
    const r = num(d, `${key}_ratio`) ?? HUB_DEFAULT_RATIO[key] ?? 1;
    const adjust = Math.trunc(t * (r - 1));
    if (HUB_PROMPT_SIDE.has(key)) p += adjust;
    else c += adjust;
  }
  let q = d.price_type === "times" ? Math.trunc(1000 * inR) : Math.ceil(p * inR + c * outR);
  if (inR !== 0 && q <= 0) q = 1;
  if (p + c === 0) q = 0;
  // Float arithmetic as the gateway's: a whole-number boundary may land one either way.
  return { expected: q, ok: Math.abs(q - e.quota) <= 1 };
}

/** The entry's charge recomputed, or why it cannot be; null for an entry that is not a charge. */
export function checkCharge(e: CheckedEntry, quotaPerUnit: number): ChargeCheck | null {
  if (e.type !== "consume") return null;
  if (Object.keys(e.detail).length >= CHECK_DETAIL_MAX) return { expected: null, reason: UNKNOWN.cut };
  if (outOfRange(e)) return { expected: null, reason: UNKNOWN.range };
  let checked: ChargeCheck;
  if ("price_type" in e.detail || "input_ratio" in e.detail) checked = oneHub(e);
  else if ("model_ratio" in e.detail || "model_price" in e.detail || "group_ratio" in e.detail)
    checked = newApi(e, quotaPerUnit);
  else return { expected: null, reason: UNKNOWN.ratios };
  // Bounded inputs can still multiply past what a sum holds (a million times a trillion tokens).
  return checked.expected !== null && !saneEntryFigure(checked.expected)
    ? { expected: null, reason: UNKNOWN.range }
    : checked;
}
