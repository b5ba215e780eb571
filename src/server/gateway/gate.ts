/**
 * Protects each site from this deployment, which is one client address to it (new-api allows 180
 * requests per 180 s per address by default): a request budget per minute, at most 4 calls in
 * flight, and a pause after the site answers 429. Who goes next is decided when a place and a
 * slot of the budget are free, not booked ahead: sign-ins first, then the accounts waiting for the
 * site in turn (one account's burst cannot spend the minute before another's one call), background
 * work last. The lines live in this process (core/process-state.ts); the budget, the places in
 * flight and the pause are the whole deployment's when a shared store is installed
 * (useSharedBudget: PostgreSQL or Redis), else this process's (SQLite: one process). A shared
 * store that cannot answer leaves each instance its share (the budget ÷ the instances seen in the
 * last minute) until it answers again.
 */
import { randomUUID } from "node:crypto";
import { brand } from "../core/errors";
import { heldFor } from "../core/live-load";
import { metrics, siteLabel } from "../core/metrics";
import { processState, type StatePart } from "../core/process-state";
import type { SharedBudget, SharedTake } from "../core/shared-budget";
import { activeShared, fallBack, fallbackShare, installSharedBudget, sharedBackend } from "./shared-gate";
import { head, idle, remove, take, waiters, type SiteState, type Waiter } from "./line";
import { KEPT_WINDOW_MS, countedCalls, nextSlot, noteCount, noteSent } from "./window";

export { sharedBudgetState } from "./shared-gate";
export { nextSlot } from "./window";

const MAX_IN_FLIGHT = 4;
/**
 * A call past the budget waits for its slot; one whose slot lies further away than this is
 * refused. The default, the kept window, means a slot is always waited for (about a minute).
 */
const MAX_BUDGET_WAIT_MS = KEPT_WINDOW_MS;
/**
 * A live call's place in line is judged when it joins (the slots of those ahead of it counted);
 * turns taken in between by other accounts may move it back by this much before it is refused.
 */
const TURN_SLACK_MS = 5_000;
/** Calls ahead in line counted when judging a newcomer's slot (more only refuse it sooner). */
const MAX_PROJECTED = 1_000;
const DEFAULT_BACKOFF_MS = 10_000;
/** A call's place in flight in the shared store lapses after this (its instance died mid-call). */
const SHARED_BUSY_MS = 120_000;
/** While background calls that yield are held, the line looks again this often (the stretch may end sooner). */
const HELD_LOOK_MS = 250;

const SITE_BUSY = brand("SiteBusy");

/** The site is throttled, or this service's budget for it is spent: try again later. */
export class SiteBusy extends Error {
  /** Also one made by another copy of this module (core/errors.ts brand). */
  static [Symbol.hasInstance](value: unknown): boolean {
    return SITE_BUSY.is(value);
  }

  constructor(readonly retryAfterMs: number) {
    super("site busy");
    SITE_BUSY.mark(this);
  }
}

/**
 * `signIn`: a sign-in's call, first in line (inside the budget and the pause all the same).
 * `account`: whose live call it is; the accounts waiting for one site take turns.
 * `background`: work nobody is waiting for (the ledger's sync). It goes one call at a time per
 * site, only while no live call waits, and only while the calls of the window leave a fifth of
 * the budget free, so a backfill uses what live views leave idle, keeps them a fifth at once and
 * never goes before one.
 */
export type Budget = {
  perMinute: number;
  maxWaitMs?: number;
  background?: boolean;
  /** Background work that yields to live requests: not let go in a stretch's first seconds of them. */
  yields?: boolean;
  signIn?: boolean;
  account?: string;
};

/** The part of a site's budget live calls always find free: background work stops short of it. */
const liveReserve = (perMinute: number) => Math.max(1, Math.ceil(perMinute / 5));

/** The part of a site's budget background work may use (counting every call of the window). */
const backgroundShare = (perMinute: number) => Math.max(1, perMinute - liveReserve(perMinute));

/**
 * Every site's gate in this process, its timers ended with it. A site's gate is forgotten once it
 * is idle (gateway/line.ts idle), looked for at most once a window as new sites come, so what this
 * process keeps follows the sites it calls now, not every site the deployment ever called.
 */
const GATES: StatePart<{ states: Map<number, SiteState>; sweptAt: number }> = {
  name: "gates",
  create: () => ({ states: new Map(), sweptAt: 0 }),
  dispose: ({ states }) => {
    for (const state of states.values()) if (state.timer) clearTimeout(state.timer);
  },
};

function stateOf(siteId: number): SiteState {
  const gates = processState().get(GATES);
  let state = gates.states.get(siteId);
  if (!state) {
    const now = Date.now();
    if (now - gates.sweptAt >= KEPT_WINDOW_MS) {
      gates.sweptAt = now;
      for (const [id, s] of gates.states) if (idle(s, now, KEPT_WINDOW_MS)) gates.states.delete(id);
    }
    state = {
      siteId,
      inFlight: 0,
      backgroundRunning: 0,
      signIns: [],
      live: new Map(),
      background: [],
      slots: [],
      pausedUntil: 0,
      timer: null,
      pumping: false,
      again: false,
    };
    gates.states.set(siteId, state);
  }
  return state;
}

/** How many sites' gates this process keeps now (tests: idle ones are forgotten). */
export function gatesKept(): number {
  return processState().get(GATES).states.size;
}

/** The store did not answer: every site's line goes on in this process, each on its share. */
function onFallback(instances: number): void {
  for (const state of processState().get(GATES).states.values()) {
    for (const w of waiters(state)) w.share = Math.max(1, Math.floor(w.share / instances));
    dispatch(state);
  }
}

/** The store answers again: every site's line goes back to it. */
function onShared(): void {
  for (const [siteId, state] of processState().get(GATES).states) pump(state, siteId);
}

/**
 * Installs the deployment's shared store of the budgets (null: this process keeps them). This
 * instance notes itself alive there every 10 s; readiness and the metrics read sharedBudgetState.
 */
export function useSharedBudget(backend: SharedBudget | null): Promise<void> {
  return installSharedBudget(backend, { fallback: onFallback, shared: onShared });
}

const enterFallback = (error: unknown) => fallBack(error, onFallback);

/** Fails every call waiting in the site's line (the site asked for quiet). */
function failAll(state: SiteState, error: Error): void {
  for (const w of waiters(state)) w.fail(error);
  state.signIns = [];
  state.live.clear();
  state.background = [];
}

/** Looks at the site's line again: in the shared store when it answers, else in this process. */
function wakeLine(state: SiteState, siteId: number): void {
  if (activeShared()) pump(state, siteId);
  else dispatch(state);
}

/**
 * Shared mode: lets go whoever's turn it is while the store gives a slot and a place, one ask at
 * a time per site (a pass under way is asked to look again instead of racing it).
 */
function pump(state: SiteState, siteId: number): void {
  if (state.pumping) {
    state.again = true;
    return;
  }
  state.pumping = true;
  void (async () => {
    try {
      do {
        state.again = false;
        await pumpOnce(state, siteId);
      } while (state.again);
    } finally {
      state.pumping = false;
    }
  })();
}

async function pumpOnce(state: SiteState, siteId: number): Promise<void> {
  if (state.timer) clearTimeout(state.timer);
  state.timer = null;
  let wake = Infinity;
  while (state.inFlight < MAX_IN_FLIGHT) {
    const backend = activeShared();
    if (!backend) {
      dispatch(state);
      return;
    }
    if (state.pausedUntil > Date.now()) {
      failAll(state, new SiteBusy(state.pausedUntil - Date.now()));
      break;
    }
    const next = head(state);
    if (!next) break;
    const token = randomUUID();
    let answer: SharedTake;
    try {
      answer = await backend.take(siteId, token, {
        limit: next.share,
        background: next.background,
        windowMs: KEPT_WINDOW_MS,
        maxInFlight: MAX_IN_FLIGHT,
        busyMs: SHARED_BUSY_MS,
      });
    } catch (error) {
      enterFallback(error);
      return;
    }
    if (answer.kind === "paused") {
      state.pausedUntil = Math.max(state.pausedUntil, Date.now() + answer.ms);
      continue;
    }
    if (answer.kind === "wait") {
      noteCount(siteId, answer.used);
      wake = Date.now() + answer.ms;
      break;
    }
    // While the store was asked, the call may have left the line (its wait ran out: its place in
    // flight is given back, its slot stays counted) or another come before it (a sign-in).
    if (head(state) === next) take(state, next);
    else if (waiters(state).includes(next)) remove(state, next);
    else {
      void backend.done(siteId, token).catch(() => undefined);
      continue;
    }
    next.token = token;
    next.used = answer.used;
    send(state, next, Date.now());
  }
  const now = Date.now();
  for (const w of waiters(state)) {
    if (w.deadline <= now) {
      w.fail(new SiteBusy(Math.max(0, (wake === Infinity ? now : wake) - now)));
      remove(state, w);
    } else wake = Math.min(wake, w.deadline);
  }
  wake = Math.min(wake, heldWake(state, now));
  if (wake !== Infinity && waiters(state).length > 0) {
    state.timer = setTimeout(() => pump(state, siteId), Math.max(0, wake - now));
    state.timer.unref();
  }
}

/** Lets a call taken from its line go: its place in flight and its slot of the budget are its own. */
function send(state: SiteState, waiter: Waiter, now: number): void {
  state.inFlight++;
  if (waiter.background) state.backgroundRunning++;
  // Calls older than the window leave it here too (with a shared store nothing else prunes it).
  if ((state.slots[0] ?? now) <= now - KEPT_WINDOW_MS)
    state.slots = state.slots.filter((t) => t > now - KEPT_WINDOW_MS);
  state.slots.push(now);
  if (sharedBackend())
    noteSent(state.siteId, {
      token: waiter.token ?? randomUUID(),
      perMinute: waiter.perMinute,
      background: waiter.background,
      used: waiter.used ?? null,
    });
  waiter.go();
}

/** Lets go whoever's turn it is while a place and a slot are free; wakes itself for the next. */
function dispatch(state: SiteState): void {
  if (state.timer) clearTimeout(state.timer);
  state.timer = null;
  const now = Date.now();
  state.slots = state.slots.filter((t) => t > now - KEPT_WINDOW_MS);
  if (state.pausedUntil > now) failAll(state, new SiteBusy(state.pausedUntil - now));
  let wake = Infinity;
  while (state.inFlight < MAX_IN_FLIGHT) {
    const next = head(state);
    if (!next) break;
    const at = nextSlot(countedCalls(state.siteId, state.slots, now), next.share, now);
    if (at > now) {
      wake = at;
      break;
    }
    take(state, next);
    send(state, next, now);
  }
  // Whoever could not get a slot within its wait is told now (waiting for a place in flight is
  // not the budget's wait; background work waits for live calls within its wait too).
  for (const w of waiters(state)) {
    const slotIn = w.deadline <= now ? nextSlot(countedCalls(state.siteId, state.slots, now), w.share, now) - now : 0;
    if (w.deadline <= now && (w.background || slotIn > 0)) {
      w.fail(new SiteBusy(Math.max(0, slotIn)));
      remove(state, w);
    } else wake = Math.min(wake, w.deadline);
  }
  wake = Math.min(wake, heldWake(state, now));
  if (wake !== Infinity) {
    state.timer = setTimeout(() => dispatch(state), Math.max(0, wake - now));
    state.timer.unref();
  }
}

/** When the line looks again for background calls held while people are served (Infinity: none is). */
function heldWake(state: SiteState, now: number): number {
  if (!state.background.some((w) => w.yields)) return Infinity;
  const held = heldFor();
  return held > 0 ? now + Math.min(held, HELD_LOOK_MS) : Infinity;
}

/**
 * When a call that joins the line now could be sent, the slots of the `ahead` calls before it
 * taken first.
 */
function projectedSlot(state: SiteState, share: number, ahead: number, now: number): number {
  const slots = countedCalls(state.siteId, state.slots, now);
  let at = now;
  for (let i = 0; i <= Math.min(ahead, MAX_PROJECTED); i++) {
    at = nextSlot(slots, share, now);
    slots.push(at);
  }
  return at;
}

/**
 * Runs one call to the site inside its in-flight limit and its budget, when its turn comes. The
 * slot is taken when the call is sent, so the site never sees more than the budget in any minute.
 * A call whose slot, counting the calls ahead of it, lies beyond `maxWaitMs` is refused at once.
 */
export async function throughGate<T>(siteId: number, budget: Budget, call: () => Promise<T>): Promise<T> {
  const state = stateOf(siteId);
  const now = Date.now();
  if (state.pausedUntil > now) throw new SiteBusy(state.pausedUntil - now);
  const background = budget.background === true;
  const share = fallbackShare(background ? backgroundShare(budget.perMinute) : budget.perMinute);
  const maxWaitMs = budget.maxWaitMs ?? MAX_BUDGET_WAIT_MS;
  const shared = activeShared();
  if (!shared) {
    // Judged here when this process keeps the budget; in the shared store, at the deadline.
    const liveAhead = [...state.live.values()].reduce((n, q) => n + q.length, 0);
    const ahead = state.signIns.length + (budget.signIn ? 0 : liveAhead + (background ? state.background.length : 0));
    const at = projectedSlot(state, share, ahead, now);
    if (at - now > maxWaitMs) throw new SiteBusy(at - now);
  }
  const deadline = now + maxWaitMs + (background ? 0 : TURN_SLACK_MS);
  const waiter: Waiter = {
    share,
    perMinute: budget.perMinute,
    deadline,
    background,
    yields: background && budget.yields === true,
    go: () => undefined,
    fail: () => undefined,
  };
  await new Promise<void>((go, fail) => {
    waiter.go = go;
    waiter.fail = fail;
    if (budget.signIn) state.signIns.push(waiter);
    else if (background) state.background.push(waiter);
    else {
      const key = budget.account ?? "";
      const queue = state.live.get(key);
      if (queue) queue.push(waiter);
      else state.live.set(key, [waiter]);
    }
    wakeLine(state, siteId);
  });
  metrics().budgetWaitSeconds.observe(
    { site: siteLabel(String(siteId)), kind: budget.signIn ? "signin" : background ? "background" : "live" },
    (Date.now() - now) / 1000,
  );
  try {
    return await call();
  } finally {
    state.inFlight--;
    if (background) state.backgroundRunning--;
    const token = waiter.token;
    const store = sharedBackend();
    if (token && store) void store.done(siteId, token).catch(() => undefined);
    wakeLine(state, siteId);
  }
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
  metrics().sitePauses.inc({ site: siteLabel(String(siteId)) });
  // Every instance holds off (the store keeps the pause); a store that does not answer: this one does.
  void activeShared()
    ?.pause(siteId, ms)
    .catch((error: unknown) => enterFallback(error));
  // Calls waiting for their turn hear it now rather than after their wait.
  wakeLine(state, siteId);
  return ms;
}
