/**
 * A consume entry's cache as its log tells it (docs/design.md 27): its input tokens in all, how many
 * were read from the cache and written to it, and in quota units what the reads saved against the
 * full input price and what the writes cost above it, at the entry's own ratios.
 *
 * - new-api and its forks (`other`): `cache_tokens` read at `cache_ratio`, `cache_creation_tokens`
 *   (with the 5-minute and 1-hour parts) written at `cache_creation_ratio`; OpenAI's usage counts
 *   both inside `prompt_tokens`, Anthropic's (`usage_semantic: "anthropic"`, and logs of 5m/1h
 *   writes before `input_tokens_total`) outside it. Per-call entries save nothing.
 * - one-hub and done-hub (`metadata`): `cached_tokens` and `cached_read_tokens` read,
 *   `cached_write_tokens`, `cached_write_1h_tokens` and `openai_cache_write_tokens` written, each
 *   at its `_ratio` (the families' defaults where absent), all inside `prompt_tokens`.
 * - one-api logs none: its entries have input only.
 */
import { num, tokens, type CheckedEntry } from "./charge-check";
import { saneEntryFigure } from "../../shared/bounds";

export type CacheFigures = { input: number; read: number; write: number; saved: number; cost: number };

const HUB_READ: Record<string, number> = { cached_tokens: 1, cached_read_tokens: 0.1 };
const HUB_WRITE: Record<string, number> = {
  cached_write_tokens: 1.25,
  cached_write_1h_tokens: 2,
  openai_cache_write_tokens: 1.25,
};

function hub(e: CheckedEntry): CacheFigures {
  const d = e.detail;
  const inR = d.price_type === "times" ? 0 : (num(d, "input_ratio") ?? 0) * (num(d, "group_ratio") ?? 1);
  const out: CacheFigures = { input: e.promptTokens, read: 0, write: 0, saved: 0, cost: 0 };
  for (const [key, fallback] of Object.entries(HUB_READ)) {
    const t = tokens(d, key);
    out.read += t;
    out.saved += t * (1 - (num(d, `${key}_ratio`) ?? fallback)) * inR;
  }
  for (const [key, fallback] of Object.entries(HUB_WRITE)) {
    const t = tokens(d, key);
    out.write += t;
    out.cost += t * ((num(d, `${key}_ratio`) ?? fallback) - 1) * inR;
  }
  return out;
}

function newApi(e: CheckedEntry): CacheFigures {
  const d = e.detail;
  const read = tokens(d, "cache_tokens");
  const cc5m = tokens(d, "cache_creation_tokens_5m");
  const cc1h = tokens(d, "cache_creation_tokens_1h");
  const write = Math.max(tokens(d, "cache_creation_tokens"), cc5m + cc1h);
  const anthropic = d.usage_semantic === "anthropic";
  const inside = !anthropic && !((cc5m > 0 || cc1h > 0) && d.input_tokens_total === undefined);
  const perCall = (num(d, "model_price") ?? -1) >= 0;
  const ratio = perCall ? 0 : (num(d, "model_ratio") ?? 0) * (num(d, "group_ratio") ?? 1);
  const ccr = num(d, "cache_creation_ratio") ?? 1;
  const rest = Math.max(0, write - cc5m - cc1h);
  const cost =
    (rest * (ccr - 1) +
      cc5m * ((num(d, "cache_creation_ratio_5m") ?? ccr) - 1) +
      cc1h * ((num(d, "cache_creation_ratio_1h") ?? 1) - 1)) *
    ratio;
  return {
    input: inside ? e.promptTokens : e.promptTokens + read + write,
    read,
    write,
    saved: read * (1 - (num(d, "cache_ratio") ?? 1)) * ratio,
    cost,
  };
}

/**
 * The entry's cache figures (quota units rounded to whole units); null for an entry that is not a
 * charge, or whose figures are outside the bounds (docs/design.md 29): unknown, not counted.
 */
export function cacheFigures(e: CheckedEntry): CacheFigures | null {
  if (e.type !== "consume") return null;
  const raw = "price_type" in e.detail || "input_ratio" in e.detail ? hub(e) : newApi(e);
  const out = { ...raw, saved: Math.round(raw.saved), cost: Math.round(raw.cost) };
  return Object.values(out).every(saneEntryFigure) ? out : null;
}
