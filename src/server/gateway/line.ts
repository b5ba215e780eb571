/**
 * A site's line in this process (gateway/gate.ts): the calls waiting for their turn, sign-ins
 * first, then the accounts in turn, background work last, and what the site has in flight.
 */
import { heldFor } from "../core/live-load";

/** A call waiting for its turn: an in-flight place and a slot of the budget, both free now. */
export type Waiter = {
  /** The calls of the window it may count up to: its budget, or background work's share. */
  share: number;
  /** The site's budget. */
  perMinute: number;
  /** Past it, a call still waiting for a slot is refused (background work: for anything). */
  deadline: number;
  background: boolean;
  /** Background work that yields to live requests: held in a stretch's first seconds (core/live-load.ts). */
  yields: boolean;
  go: () => void;
  fail: (error: Error) => void;
  /** The call's name in the shared store (its place in flight), once it goes. */
  token?: string;
  /** The window's count the store answered when it gave the slot. */
  used?: number;
};

export type SiteState = {
  siteId: number;
  inFlight: number;
  backgroundRunning: number;
  signIns: Waiter[];
  /** Live calls per account; the first account's first call goes next, then that account goes to the back. */
  live: Map<string, Waiter[]>;
  background: Waiter[];
  /** When the calls of the kept window were sent. */
  slots: number[];
  pausedUntil: number;
  /** Wakes the line when the next slot frees or a wait runs out. */
  timer: NodeJS.Timeout | null;
  /** Shared mode: a pass over the line is asking the store (one at a time), and another is wanted. */
  pumping: boolean;
  again: boolean;
};

/** The waiter whose turn it is, without taking it from its line. */
export function head(state: SiteState): Waiter | undefined {
  const signIn = state.signIns[0];
  if (signIn) return signIn;
  const first = state.live.values().next();
  if (!first.done) return first.value[0];
  // Background work only while nobody else waits and none of it is under way.
  return state.backgroundRunning === 0 ? backgroundHead(state) : undefined;
}

/** The first background call that may go: while people are served, none that yields to them. */
function backgroundHead(state: SiteState): Waiter | undefined {
  return heldFor() > 0 ? state.background.find((w) => !w.yields) : state.background[0];
}

/**
 * Takes `w`, the head head() gave, from its line; a live account goes to the back of the turn. The
 * waiter is named, not found again: whether background calls are held may have changed since.
 */
export function take(state: SiteState, w: Waiter): void {
  const first = state.live.entries().next();
  if (!first.done && first.value[1][0] === w) {
    const [account, queue] = first.value;
    queue.shift();
    state.live.delete(account);
    if (queue.length > 0) state.live.set(account, queue);
    return;
  }
  remove(state, w);
}

export function waiters(state: SiteState): Waiter[] {
  return [...state.signIns, ...[...state.live.values()].flat(), ...state.background];
}

export function remove(state: SiteState, waiter: Waiter): void {
  const drop = (line: Waiter[]) => {
    const at = line.indexOf(waiter);
    if (at >= 0) line.splice(at, 1);
  };
  drop(state.signIns);
  drop(state.background);
  for (const [account, queue] of state.live) {
    drop(queue);
    if (queue.length === 0) state.live.delete(account);
  }
}

/**
 * Nothing waits, nothing is under way or paused and every call it sent has left the window: the
 * line can be forgotten (a new one starts empty, as this one is).
 */
export function idle(state: SiteState, now: number, windowMs: number): boolean {
  return (
    state.inFlight === 0 &&
    state.timer === null &&
    !state.pumping &&
    state.pausedUntil <= now &&
    waiters(state).length === 0 &&
    state.slots.every((t) => t <= now - windowMs)
  );
}
