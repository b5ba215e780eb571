/**
 * The sliding window of a site's budget as this instance counts it, and what it knows of the
 * window in the deployment's shared store (shared-gate.ts): its own calls, given back to the
 * store when it returns (a restarted Redis has forgotten everyone's), the store's last count, and
 * while the store is away the others' calls it must assume, so that the loss and the return of
 * the store never let more than the budget through in any minute.
 */
import { processState, type StatePart } from "../core/process-state";
import type { SharedBudget } from "../core/shared-budget";

/**
 * The gate keeps its window a second wider than the site's minute, so that the time between
 * sending and arriving never puts one call too many into one of the site's minutes.
 */
export const KEPT_WINDOW_MS = 60_000 + 1_000;

/**
 * What this instance knows of a site's window in the shared store: its own calls (given back to
 * the store when it returns), the store's last count, and while the store is away the others'
 * calls it must assume (their times: when they were last known).
 */
type SiteWindow = {
  perMinute: number;
  sent: Array<{ at: number; token: string; background: boolean }>;
  seen: { at: number; used: number; own: number } | null;
  assumed: number[];
};

/**
 * The first moment a new call fits the sliding budget: now while fewer than `perMinute` calls are
 * in the last window, else one window after the `perMinute`-th newest.
 */
export function nextSlot(slots: readonly number[], perMinute: number, now: number): number {
  const live = slots.filter((t) => t > now - KEPT_WINDOW_MS);
  if (live.length < perMinute) return now;
  return Math.max(now, (live[live.length - perMinute] ?? now) + KEPT_WINDOW_MS);
}

/** Every site's window as known here, for the sites this instance called with a store installed. */
const WINDOWS: StatePart<Map<number, SiteWindow>> = { name: "gate-windows", create: () => new Map() };
/** Every this many calls noted, the sites no call of the last window was sent to are forgotten. */
const SWEEP_EVERY = 4096;
let noted = 0;

/** Forgets the sites this instance has not called within the window (a deployment of many sites). */
function sweep(now: number): void {
  const windows = processState().get(WINDOWS);
  for (const [siteId, w] of windows) {
    windowOf(siteId, now);
    const seenLately = w.seen !== null && w.seen.at > now - KEPT_WINDOW_MS;
    if (w.sent.length === 0 && w.assumed.length === 0 && !seenLately) windows.delete(siteId);
  }
}

function windowOf(siteId: number, now: number): SiteWindow {
  const windows = processState().get(WINDOWS);
  let w = windows.get(siteId);
  if (!w) {
    w = { perMinute: 1, sent: [], seen: null, assumed: [] };
    windows.set(siteId, w);
  }
  if (w.sent.length > 0 && (w.sent[0]?.at ?? now) <= now - KEPT_WINDOW_MS) {
    w.sent = w.sent.filter((c) => c.at > now - KEPT_WINDOW_MS);
  }
  return w;
}

/** A call this instance sent: its name in the store, and the window's count the store answered (null: none). */
export type Sent = { token: string; perMinute: number; background: boolean; used: number | null };

/** Notes a call this instance sent to the site while a shared store is installed (answering or not). */
export function noteSent(siteId: number, { token, perMinute, background, used }: Sent): void {
  const now = Date.now();
  if (++noted % SWEEP_EVERY === 0) sweep(now);
  const w = windowOf(siteId, now);
  w.perMinute = perMinute;
  w.sent.push({ at: now, token, background });
  if (used !== null) w.seen = { at: now, used, own: w.sent.length };
}

/** Notes the store's count of a site's window when it answered "wait" (the window is full). */
export function noteCount(siteId: number, used: number): void {
  const now = Date.now();
  const w = windowOf(siteId, now);
  w.seen = { at: now, used, own: w.sent.length };
}

/**
 * The others' calls this instance counts in a site's window while the store is away, beside its
 * own: those over the others' shares, by the store's last count of the window (as of when it
 * answered; they leave the window a minute after that). Where this instance has no count of the
 * last minute it goes on at its share alone (docs/design.md 23 bounds that).
 */
export function assumeOthers(instances: number, now: number): void {
  for (const [siteId, w] of processState().get(WINDOWS)) {
    windowOf(siteId, now);
    const seen = w.seen && w.seen.at > now - KEPT_WINDOW_MS ? w.seen : null;
    const over = seen ? seen.used - seen.own - (instances - 1) * Math.floor(w.perMinute / instances) : 0;
    w.assumed = seen && over > 0 ? Array<number>(over).fill(seen.at) : [];
  }
}

/**
 * The calls of a site's kept window this process counts, in order: its own (`own`), and while the
 * shared store is away the others' it assumes.
 */
export function countedCalls(siteId: number, own: readonly number[], now: number): number[] {
  const inWindow = own.filter((t) => t > now - KEPT_WINDOW_MS);
  const w = processState().get(WINDOWS).get(siteId);
  if (!w || w.assumed.length === 0) return inWindow;
  w.assumed = w.assumed.filter((t) => t > now - KEPT_WINDOW_MS);
  return [...w.assumed, ...inWindow].sort((a, b) => a - b);
}

/** Gives the store this instance's calls of each site's window (it was away, or forgot them). */
export async function restoreWindows(backend: SharedBudget): Promise<void> {
  const now = Date.now();
  for (const [siteId, w] of processState().get(WINDOWS)) {
    windowOf(siteId, now);
    const calls = w.sent.map((c) => ({ token: c.token, ageMs: now - c.at, background: c.background }));
    await backend.restore(siteId, calls, KEPT_WINDOW_MS);
    if (w.sent.length === 0 && w.assumed.length === 0) processState().get(WINDOWS).delete(siteId);
  }
}
