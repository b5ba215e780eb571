/**
 * Model prices as each family publishes them to a user (gateway-actions.md §2.5, §3, §4, §5),
 * normalised to USD at group ratio 1: per 1M input and output tokens, or per call. new-api and
 * Veloera give ratios (`GET /api/pricing`: model_ratio × 1e6 ÷ quota_per_unit per 1M input,
 * × completion_ratio for output; per-call `model_price`); one-hub and done-hub give quota per
 * token (`GET /api/prices`: input × 1e6 ÷ quota_per_unit; a "times" model 1000 × input ÷
 * quota_per_unit a call); one-api publishes none (its prices come from the account's log). A
 * hostile site's lists are cut: at most MAX_MODELS models, names at most NAME_MAX characters, and
 * a ratio outside its bounds (a finite number from 0 to a million) drops its model.
 */
import type { Family } from "./families";
import { isRow, type SiteRequest } from "./reads";
import { ratioOf } from "../../shared/bounds";

const MAX_MODELS = 2000;
const NAME_MAX = 200;
const GROUPS_MAX = 100;

/** A model's price at group ratio 1, in USD; null where a figure does not apply. */
export type ModelPrice = {
  model: string;
  inputPerMillionUsd: number | null;
  outputPerMillionUsd: number | null;
  perCallUsd: number | null;
  /** The groups the site enables the model in; null when the site does not say. */
  groups: string[] | null;
};

/** How a family publishes its prices: the request, or null when it shows users none. */
export function pricesRequest(family: Family): SiteRequest | null {
  if (family === "one-api") return null;
  if (family === "one-hub" || family === "done-hub") return { path: "/api/prices", query: {} };
  return { path: "/api/pricing", query: {} };
}

/** The account's usable models (names), per family. */
export function userModelsRequest(family: Family): SiteRequest {
  if (family === "one-api") return { path: "/api/user/available_models", query: {} };
  if (family === "one-hub" || family === "done-hub") return { path: "/api/available_model", query: {} };
  return { path: "/api/user/models", query: {} };
}

/** The group ratios the account may see: its own group's among them where the family says it to a token. */
export function groupsRequest(family: Family): SiteRequest | null {
  if (family === "one-api") return null;
  if (family === "one-hub" || family === "done-hub") return { path: "/api/user_group_map", query: {} };
  return { path: "/api/user/self/groups", query: {} };
}

const round9 = (n: number) => Math.round(n * 1e9) / 1e9;
/** A ratio or price within its bounds (a number, or a numeric string; docs/design.md 29); null otherwise. */
const ratio = ratioOf;
const name = (v: unknown) => (typeof v === "string" ? v.trim().slice(0, NAME_MAX) : "");
const names = (v: unknown): string[] | null =>
  Array.isArray(v) ? v.map(name).filter(Boolean).slice(0, GROUPS_MAX) : null;

/**
 * The models of a price answer (the whole envelope: new-api keeps `group_ratio` beside `data`),
 * normalised at group ratio 1 with the site's quota units per USD.
 */
export function parsePrices(family: Family, envelope: Record<string, unknown>, quotaPerUnit: number): ModelPrice[] {
  const rows = Array.isArray(envelope.data) ? envelope.data.filter(isRow).slice(0, MAX_MODELS) : [];
  const perMillion = (quotaPerToken: number) => round9((quotaPerToken * 1e6) / quotaPerUnit);
  const out: ModelPrice[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    if (family === "one-hub" || family === "done-hub") {
      const model = name(row.model);
      const input = ratio(row.input);
      const output = ratio(row.output);
      if (!model || input === null || seen.has(model)) continue;
      seen.add(model);
      out.push(
        row.type === "times"
          ? {
              model,
              inputPerMillionUsd: null,
              outputPerMillionUsd: null,
              perCallUsd: round9((1000 * input) / quotaPerUnit),
              groups: null,
            }
          : {
              model,
              inputPerMillionUsd: perMillion(input),
              outputPerMillionUsd: perMillion(output ?? input),
              perCallUsd: null,
              groups: null,
            },
      );
      continue;
    }
    const model = name(row.model_name);
    if (!model || seen.has(model)) continue;
    // An expression priced model (billing_mode "tiered_expr") has no closed formula: left out.
    if (row.billing_mode === "tiered_expr") continue;
    const groups = names(row.enable_groups);
    if (row.quota_type === 1) {
      const price = ratio(row.model_price);
      if (price === null) continue;
      seen.add(model);
      out.push({ model, inputPerMillionUsd: null, outputPerMillionUsd: null, perCallUsd: round9(price), groups });
      continue;
    }
    const modelRatio = ratio(row.model_ratio);
    const completion = ratio(row.completion_ratio) ?? 1;
    if (modelRatio === null) continue;
    seen.add(model);
    const input = perMillion(modelRatio);
    out.push({
      model,
      inputPerMillionUsd: input,
      outputPerMillionUsd: round9(input * completion),
      perCallUsd: null,
      groups,
    });
  }
  return out.sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : 0));
}

/**
 * Group ratios by group: new-api's `/api/user/self/groups` (`{ratio, desc}`; `auto`'s ratio is the
 * word 自动, picked per request: left out), one-hub's `/api/user_group_map` (`{ratio, …}`), or
 * new-api's `group_ratio` of the price answer.
 */
export function parseGroupRatios(data: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isRow(data)) return out;
  for (const [group, value] of Object.entries(data).slice(0, GROUPS_MAX)) {
    const r = isRow(value) ? ratio(value.ratio) : ratio(value);
    if (r !== null && group.length <= NAME_MAX) out[group] = r;
  }
  return out;
}

/**
 * The account's usable model names: a list (new-api, Veloera, one-api), or one-hub's map of
 * model → {groups} (to a token caller, the models of the public groups).
 */
export function parseUserModels(data: unknown): string[] {
  const list = Array.isArray(data) ? data.map(name) : isRow(data) ? Object.keys(data).map(name) : [];
  return [...new Set(list.filter(Boolean))].slice(0, MAX_MODELS).sort();
}

/** A model's price in a group of ratio `g`, in USD. */
export function priced(p: ModelPrice, g: number): Omit<ModelPrice, "model" | "groups"> {
  const times = (v: number | null) => (v === null ? null : round9(v * g));
  return {
    inputPerMillionUsd: times(p.inputPerMillionUsd),
    outputPerMillionUsd: times(p.outputPerMillionUsd),
    perCallUsd: times(p.perCallUsd),
  };
}

/** Sums over an account's consume entries of one model, for the least-squares fit below. */
export type FitSums = {
  n: number;
  q: number;
  p: number;
  c: number;
  qq: number;
  pp: number;
  cc: number;
  pc: number;
  qp: number;
  qc: number;
};

/**
 * A model's effective price from an account's own log, where the site publishes none (one-api):
 * the quota of each call against its prompt and completion tokens, fitted by least squares
 * (quota ≈ a·prompt + b·completion), so a and b are the quota per input and output token with
 * every ratio of the account's group in them. Calls whose quota never moves with their tokens are
 * priced per call. Null with fewer than 3 calls.
 */
export function fitPrice(s: FitSums, quotaPerUnit: number): Omit<ModelPrice, "model" | "groups"> | null {
  if (s.n < 3 || s.q <= 0) return null;
  const perMillion = (perToken: number) => round9((Math.max(0, perToken) * 1e6) / quotaPerUnit);
  const meanQ = s.q / s.n;
  // Every call cost the same whatever its tokens: a per-call price.
  if (s.qq / s.n - meanQ * meanQ <= 1e-9 * meanQ * meanQ || (s.p === 0 && s.c === 0)) {
    return { inputPerMillionUsd: null, outputPerMillionUsd: null, perCallUsd: round9(meanQ / quotaPerUnit) };
  }
  const det = s.pp * s.cc - s.pc * s.pc;
  if (s.cc > 0 && det > 1e-9 * s.pp * s.cc) {
    const a = (s.qp * s.cc - s.qc * s.pc) / det;
    const b = (s.pp * s.qc - s.pc * s.qp) / det;
    return { inputPerMillionUsd: perMillion(a), outputPerMillionUsd: perMillion(b), perCallUsd: null };
  }
  // No completion tokens (embeddings): input only. (Completions always the same share of the
  // prompt cannot be told apart from it: no price then.)
  if (s.cc === 0 && s.pp > 0) {
    return { inputPerMillionUsd: perMillion(s.qp / s.pp), outputPerMillionUsd: null, perCallUsd: null };
  }
  return null;
}
