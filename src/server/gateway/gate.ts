/**
 * Protects each site from this deployment, which is one client address to it (new-api allows 180
 * requests per 180 s per address by default): a request budget per minute, at most 4 calls in
 * flight, and a pause after the site answers 429. State lives in this process.
 */
import pLimit, { type LimitFunction } from "p-limit";

const MAX_IN_FLIGHT = 4;
const WINDOW_MS = 60_000;
/**
 * The gate keeps its window a second wider than the site's minute, so that the time between
 * sending and arriving never puts one call too many into one of the site's minutes.
 */
const KEPT_WINDOW_MS = WINDOW_MS + 1_000;
/**
 * A call past the budget waits for its slot; one further away than this is refused at once. The
 * default, the kept window, means a slot is always waited for (about a minute), never refused.
 */
const MAX_BUDGET_WAIT_MS = KEPT_WINDOW_MS;
const DEFAULT_BACKOFF_MS = 10_000;

/** The site is throttled, or this service's budget for it is spent: try again later. */
export class SiteBusy extends Error {
  constructor(readonly retryAfterMs: number) {
    super("site busy");
  }
}

type SiteState = {
  limit: LimitFunction;
  background: LimitFunction;
  slots: number[];
  pausedUntil: number;
  /** Live calls waiting for their place or slot: background work waits while there are any. */
  liveWaiting: number;
};

const states = new Map<number, SiteState>();

function stateOf(siteId: number): SiteState {
  let state = states.get(siteId);
  if (!state) {
    state = { limit: pLimit(MAX_IN_FLIGHT), background: pLimit(1), slots: [], pausedUntil: 0, liveWaiting: 0 };
    states.set(siteId, state);
  }
  return state;
}

/** A timer that never keeps the process alive by itself. */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * The first moment a new call fits the sliding budget: now while fewer than `perMinute` calls are
 * reserved in the last window, else one window after the `perMinute`-th newest reservation.
 */
export function nextSlot(slots: readonly number[], perMinute: number, now: number): number {
  const live = slots.filter((t) => t > now - KEPT_WINDOW_MS);
  if (live.length < perMinute) return now;
  return Math.max(now, (live[live.length - perMinute] ?? now) + KEPT_WINDOW_MS);
}

/**
 * Reserves the next slot of the site's budget (first come, first served) and waits for it; throws
 * SiteBusy while the site is paused or when the wait would be longer than `maxWaitMs`.
 */
async function reserve(state: SiteState, perMinute: number, maxWaitMs: number, now = Date.now()): Promise<void> {
  if (state.pausedUntil > now) throw new SiteBusy(state.pausedUntil - now);
  state.slots = state.slots.filter((t) => t > now - KEPT_WINDOW_MS);
  const at = nextSlot(state.slots, perMinute, now);
  if (at - now > maxWaitMs) throw new SiteBusy(at - now);
  state.slots.push(at);
  state.slots.sort((a, b) => a - b);
  if (at > now) await sleep(at - now);
  // The site may have said 429 while this call waited.
  if (state.pausedUntil > Date.now()) throw new SiteBusy(state.pausedUntil - Date.now());
}

/**
 * `background`: work nobody is waiting for (the ledger's sync). It goes one call at a time per
 * site, only while no live call is waiting, and within half of the budget, so a backfill leaves
 * live views the other half at once and never goes before one.
 */
export type Budget = { perMinute: number; maxWaitMs?: number; background?: boolean };

/** The part of a site's budget background work may use. */
export const backgroundShare = (perMinute: number) => Math.max(1, Math.floor(perMinute / 2));

const LIVE_FIRST_POLL_MS = 100;

/**
 * Runs one call to the site inside its in-flight limit and its budget. The budget slot is taken
 * once the call holds an in-flight place, so the time recorded is when it is really sent: the site
 * never sees more than the budget in any minute. (While the budget is spent no call can go, so a
 * call waiting for its slot keeps no other from going.)
 */
export function throughGate<T>(siteId: number, budget: Budget, call: () => Promise<T>): Promise<T> {
  const state = stateOf(siteId);
  const maxWaitMs = budget.maxWaitMs ?? MAX_BUDGET_WAIT_MS;
  if (budget.background) {
    return state.background(async () => {
      const since = Date.now();
      while (state.liveWaiting > 0) {
        if (Date.now() - since > maxWaitMs) throw new SiteBusy(LIVE_FIRST_POLL_MS);
        await sleep(LIVE_FIRST_POLL_MS);
      }
      return state.limit(async () => {
        await reserve(state, backgroundShare(budget.perMinute), maxWaitMs);
        return call();
      });
    });
  }
  state.liveWaiting++;
  let waiting = true;
  const done = () => {
    if (waiting) state.liveWaiting--;
    waiting = false;
  };
  return state
    .limit(async () => {
      try {
        await reserve(state, budget.perMinute, maxWaitMs);
      } finally {
        done();
      }
      return call();
    })
    .finally(done);
}

/** The site answered 429: no call to it until `Retry-After` (seconds or a date) has passed, else 10 s. */
export function pauseSite(siteId: number, retryAfter: string | null, now = Date.now()): number {
  let ms = DEFAULT_BACKOFF_MS;
  if (retryAfter) {
    const seconds = /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) * 1000 : Date.parse(retryAfter) - now;
    if (Number.isFinite(seconds) && seconds > 0) ms = Math.min(seconds, 10 * 60_000);
  }
  const state = stateOf(siteId);
  state.pausedUntil = Math.max(state.pausedUntil, now + ms);
  return ms;
}

/** Forgets every site's state (tests that start from a clean slate). */
export function resetGates(): void {
  states.clear();
}
