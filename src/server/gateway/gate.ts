/**
 * Protects each site from this deployment, which is one client address to it (new-api allows 180
 * requests per 180 s per address by default): a request budget per minute, at most 4 calls in
 * flight, and a pause after the site answers 429. State lives in this process.
 */
import pLimit, { type LimitFunction } from "p-limit";

export const MAX_IN_FLIGHT = 4;
const WINDOW_MS = 60_000;
/** A call whose budget slot is further away than this is refused at once rather than kept waiting. */
export const MAX_BUDGET_WAIT_MS = 15_000;
export const DEFAULT_BACKOFF_MS = 10_000;

/** The site is throttled, or this service's budget for it is spent: try again later. */
export class SiteBusy extends Error {
  constructor(readonly retryAfterMs: number) {
    super("site busy");
  }
}

type SiteState = { limit: LimitFunction; slots: number[]; pausedUntil: number };

const states = new Map<number, SiteState>();

function stateOf(siteId: number): SiteState {
  let state = states.get(siteId);
  if (!state) {
    state = { limit: pLimit(MAX_IN_FLIGHT), slots: [], pausedUntil: 0 };
    states.set(siteId, state);
  }
  return state;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reserves the next slot of the site's sliding one-minute budget (first come, first served) and
 * waits for it; throws SiteBusy while the site is paused or when the wait would be too long.
 */
async function reserve(state: SiteState, perMinute: number, now = Date.now()): Promise<void> {
  if (state.pausedUntil > now) throw new SiteBusy(state.pausedUntil - now);
  state.slots = state.slots.filter((t) => t > now - WINDOW_MS);
  const at = state.slots.length < perMinute ? now : (state.slots[state.slots.length - perMinute] ?? now) + WINDOW_MS;
  if (at - now > MAX_BUDGET_WAIT_MS) throw new SiteBusy(at - now);
  state.slots.push(at);
  state.slots.sort((a, b) => a - b);
  if (at > now) await sleep(at - now);
}

/** Runs one call to the site inside its budget and its in-flight limit. */
export async function throughGate<T>(siteId: number, perMinute: number, call: () => Promise<T>): Promise<T> {
  const state = stateOf(siteId);
  await reserve(state, perMinute);
  return state.limit(call);
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
