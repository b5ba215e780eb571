/**
 * new-api's subscriptions (docs/design.md 27): what the account's own routes say of its plans
 * (`GET /api/subscription/self`, and `GET /api/subscription/plans` for their titles and reset
 * periods), which requests a plan paid (the log's `billing_source`), and how long an account
 * lasts at a pace when plans pay before, after or instead of the wallet, as new-api chooses the
 * source: by the user's billing preference, the soonest-ending plan first, a plan's quota renewed
 * at each reset, a plan that forbids falling back to the wallet stopping the account when it is
 * used up. The routes that buy or renew are never called (gateway-actions' never-call list).
 */
import { isRow, type LogDetail, type SiteRequest } from "./reads";
import type { Family } from "./families";
import { BOUNDS, quotaOf, within } from "../../shared/bounds";

export const PLAN_PREFERENCES = ["subscription_first", "wallet_first", "subscription_only", "wallet_only"] as const;
export type PlanPreference = (typeof PLAN_PREFERENCES)[number];

export const RESET_PERIODS = ["never", "daily", "weekly", "monthly", "custom"] as const;
type ResetPeriod = (typeof RESET_PERIODS)[number];

/** One of the account's subscriptions, in the site's quota units and Unix seconds. */
export type Plan = {
  id: number;
  planId: number;
  /** From the site's plan list (only enabled plans are listed), else null. */
  title: string | null;
  status: "active" | "expired" | "cancelled";
  /** `order` (paid), `balance` (bought from the wallet), `admin` (given). */
  source: string;
  /** Quota per window; 0 = unlimited. */
  total: number;
  used: number;
  start: number;
  end: number;
  /** 0: no further reset. */
  nextReset: number;
  lastReset: number;
  /** From the plan list; null when the plan is not listed. */
  resetPeriod: ResetPeriod | null;
  /** The window's length for `custom`. */
  resetSeconds: number | null;
  /** Whether requests may fall back to the wallet when this plan's quota runs out. */
  overflow: boolean;
};

export type PlansRead = { preference: PlanPreference; plans: Plan[] };

/** Only new-api has subscriptions (since 2026-02); a build before them answers 404. */
export const familyHasPlans = (family: Family) => family === "new-api" || family === "unknown";

export const plansSelfRequest: SiteRequest = { path: "/api/subscription/self", query: {} };
export const plansListRequest: SiteRequest = { path: "/api/subscription/plans", query: {} };

const int = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? Math.trunc(v) : 0);
const text = (v: unknown, max = 200): string => (typeof v === "string" ? v.trim().slice(0, max) : "");
/** The newest second any store keeps (9999-12-31). */
const LAST_SECOND = 253_402_300_799;
const seconds = (v: unknown): number => Math.min(Math.max(int(v), 0), LAST_SECOND);

/** Each item of a list whose items are `{subscription: …}` or `{plan: …}` (or the bare object). */
function unwrap(list: unknown, key: string): Record<string, unknown>[] {
  if (!Array.isArray(list)) return [];
  return (list as unknown[]).map((item) => (isRow(item) && isRow(item[key]) ? item[key] : item)).filter(isRow);
}

/** The plan list's titles and reset periods by plan id. */
export function planCatalog(data: unknown): Map<number, Pick<Plan, "title" | "resetPeriod" | "resetSeconds">> {
  const out = new Map<number, Pick<Plan, "title" | "resetPeriod" | "resetSeconds">>();
  for (const p of unwrap(data, "plan")) {
    const period = RESET_PERIODS.find((r) => r === p.quota_reset_period) ?? null;
    // A window outside an hour to ten years is no period a runway can step through: unknown (docs/design.md 29).
    const custom = within(p.quota_reset_custom_seconds, BOUNDS.periodSeconds.min, BOUNDS.periodSeconds.max);
    out.set(int(p.id), {
      title: text(p.title) || null,
      resetPeriod: period === "custom" && custom === null ? null : period,
      resetSeconds: period === "custom" && custom !== null ? Math.trunc(custom) : null,
    });
  }
  return out;
}

/** At most this many subscriptions of an account are kept (the newest ending last). */
const PLANS_MAX = 50;

/**
 * The account's subscriptions from `/api/subscription/self`'s data: the active ones and those that
 * ended (every row the site keeps), titled from the plan list where it lists them.
 */
export function plansOf(self: unknown, catalog: ReturnType<typeof planCatalog>): PlansRead | null {
  if (!isRow(self)) return null;
  const preference = PLAN_PREFERENCES.find((p) => p === self.billing_preference) ?? "subscription_first";
  const rows = unwrap(
    Array.isArray(self.all_subscriptions) ? self.all_subscriptions : self.subscriptions,
    "subscription",
  );
  const plans = rows
    // A plan whose quota figures are outside the bounds is not one that can be read (docs/design.md 29).
    .filter((s) => [s.amount_total, s.amount_used].every((v) => typeof v !== "number" || quotaOf(v) !== null))
    .map((s): Plan => {
      const known = catalog.get(int(s.plan_id));
      const status = s.status === "active" || s.status === "cancelled" ? s.status : "expired";
      return {
        id: int(s.id),
        planId: int(s.plan_id),
        title: known?.title ?? null,
        status,
        source: text(s.source, 40) || "order",
        total: Math.max(int(s.amount_total), 0),
        used: Math.max(int(s.amount_used), 0),
        start: seconds(s.start_time),
        end: seconds(s.end_time),
        nextReset: seconds(s.next_reset_time),
        lastReset: seconds(s.last_reset_time),
        resetPeriod: known?.resetPeriod ?? null,
        resetSeconds: known?.resetSeconds ?? null,
        overflow: s.allow_wallet_overflow !== false,
      };
    })
    .filter((p) => p.id > 0)
    .sort((a, b) => b.end - a.end || b.id - a.id)
    .slice(0, PLANS_MAX);
  return { preference, plans };
}

/** A plan's name: its title from the site's list, else its number. */
export const planTitle = (p: Pick<Plan, "title" | "planId">) => p.title ?? `套餐 #${p.planId}`;

/** Whether a plan pays requests at `now`: active and not yet ended (new-api's own test). */
export const planActive = (p: Pick<Plan, "status" | "end">, now: number) => p.status === "active" && p.end > now;

/** What is left of the plan's window (null: unlimited). */
const planRemaining = (p: Pick<Plan, "total" | "used">) => (p.total > 0 ? Math.max(p.total - p.used, 0) : null);

/**
 * The plan's window at `now`: used, left (null: unlimited) and the share used (percent, one
 * decimal). A reset the site has not applied yet (it applies them lazily) starts a fresh window.
 */
export function planWindow(p: Plan, now: number): { used: number; left: number | null; usedPct: number | null } {
  const fresh = p.nextReset > 0 && p.nextReset <= now && planActive(p, now);
  const used = fresh ? 0 : Math.min(p.used, p.total > 0 ? p.total : p.used);
  if (p.total <= 0) return { used, left: null, usedPct: null };
  return { used, left: p.total - used, usedPct: Math.round((used / p.total) * 1000) / 10 };
}

/** Whether a plan paid for the logged request (new-api's `other.billing_source`). */
export const paidByPlan = (detail: LogDetail) => detail.billing_source === "subscription";

/** A fixed period's length in seconds; null for months (and for none). */
function fixedLength(p: Pick<Plan, "resetPeriod" | "resetSeconds">): number | null {
  switch (p.resetPeriod) {
    case "daily":
      return 86_400;
    case "weekly":
      return 7 * 86_400;
    case "custom":
      return p.resetSeconds !== null && p.resetSeconds >= BOUNDS.periodSeconds.min ? p.resetSeconds : null;
    default:
      return null;
  }
}

/**
 * The first reset after `t` of a plan whose reset `at` is due (`at` ≤ `t`), for its period (the
 * site's own clock is not known: UTC for months); null when it resets no more. Fixed periods in
 * closed form, months stepped (a month is at least 28 days: a bounded count from any second).
 */
function resetAfter(p: Pick<Plan, "resetPeriod" | "resetSeconds">, at: number, t: number): number | null {
  const length = fixedLength(p);
  if (length !== null) return at + (Math.floor((t - at) / length) + 1) * length;
  if (p.resetPeriod !== "monthly") return null;
  let next = at;
  while (next <= t) {
    const d = new Date(next * 1000);
    next = Math.floor(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours()) / 1000);
  }
  return next;
}

/** How far ahead the runway looks (days); longer is reported as this. */
export const RUNWAY_MAX_DAYS = 3650;
/**
 * Events (a reset, an end, a source running dry) a runway steps through exactly; past them the
 * rest is taken at the pace the wallet was drawn so far. Hourly resets over ten years would be
 * 87,600 steps an account; most accounts need a few dozen.
 */
const RUNWAY_MAX_STEPS = 2000;

/**
 * Days until the account can no longer pay for requests at `perDay` quota a day: plans and wallet
 * drawn in the order the preference sets, each plan's quota renewed at its resets until it ends.
 * Null without spend. Exact between events (a reset, an end, a source running dry); unrounded.
 */
export function runway(wallet: number, perDay: number, read: PlansRead | null, now: number): number | null {
  if (!(perDay > 0)) return null;
  const preference = read?.preference ?? "subscription_first";
  const usePlans = preference !== "wallet_only";
  const plans = (usePlans ? (read?.plans ?? []) : [])
    .filter((p) => planActive(p, now))
    .map((p) => ({ ...p, left: planRemaining(p), next: p.nextReset > 0 && p.nextReset < p.end ? p.nextReset : 0 }))
    .sort((a, b) => a.end - b.end || a.id - b.id);
  const rate = perDay / 86_400;
  const horizon = now + RUNWAY_MAX_DAYS * 86_400;
  const start = Math.max(wallet, 0);
  let left = start;
  let t = now;
  let steps = 0;
  while (t < horizon) {
    if (++steps > RUNWAY_MAX_STEPS) {
      return extrapolated({ start, left, rate, now, t, horizon }, plans, preference !== "subscription_only");
    }
    const live = plans.filter((p) => p.end > t);
    for (const p of live) {
      // Resets that fell due (a reset the site has not applied yet is applied at once, as its next request would).
      if (p.next > 0 && p.next <= t) {
        p.left = p.total > 0 ? p.total : null;
        const after = resetAfter(p, p.next, t);
        p.next = after !== null && after < p.end ? after : 0;
      }
    }
    const paying = live.find((p) => p.left === null || p.left > 0);
    const walletAllowed =
      preference === "wallet_only" ||
      preference === "wallet_first" ||
      (preference === "subscription_first" && live.every((p) => p.overflow));
    const walletFirst = preference === "wallet_first" && left > 0;
    const source: "wallet" | (typeof live)[number] | null = walletFirst
      ? "wallet"
      : paying
        ? paying
        : walletAllowed && left > 0
          ? "wallet"
          : null;
    if (source === null) break;
    // The next event: a plan's reset or end, or the source running dry.
    const events = live.flatMap((p) => [p.end, p.next > 0 ? p.next : Infinity]);
    const dry = source === "wallet" ? left / rate : source.left === null ? Infinity : source.left / rate;
    const step = Math.min(Math.min(...events, horizon) - t, dry);
    if (!(step > 0)) break;
    if (source === "wallet") left = step === dry ? 0 : left - step * rate;
    else if (source.left !== null) source.left = step === dry ? 0 : source.left - step * rate;
    t += step;
  }
  return (Math.min(t, horizon) - now) / 86_400;
}

/**
 * The rest of a runway past RUNWAY_MAX_STEPS, at `t`: the wallet drawn on at the pace it was drawn
 * since `now`; where the plans paid everything so far, they pay until the last of them ends and
 * the wallet then at the whole pace. An estimate, bounded by the horizon.
 */
function extrapolated(
  at: { start: number; left: number; rate: number; now: number; t: number; horizon: number },
  plans: Array<Pick<Plan, "end">>,
  walletUsable: boolean,
): number {
  const { start, left, rate, now, t, horizon } = at;
  const drawn = (start - left) / (t - now);
  const lastEnd = Math.max(t, ...plans.map((p) => p.end));
  const end = drawn > 0 ? t + left / drawn : walletUsable ? lastEnd + left / rate : lastEnd;
  return (Math.min(end, horizon) - now) / 86_400;
}
