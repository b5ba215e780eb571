/**
 * The sites' budgets shared by every instance of a deployment (docs/design.md 23): what the gate asks
 * of the store that keeps them (PostgreSQL or Redis, db/site-budget.ts). Each answer is atomic:
 * two instances asking at once never both get the last slot.
 */

/**
 * What a take answers: the slot is this call's, or how long until one frees, or the site's pause;
 * `used`: the calls the window holds (with this one when taken).
 */
export type SharedTake =
  { kind: "taken"; used: number } | { kind: "wait"; ms: number; used: number } | { kind: "paused"; ms: number };

/** A call this instance sent within the window, given back to a store that was away. */
type SentCall = { token: string; ageMs: number; background: boolean };

export type SharedBudget = {
  /** Where the budget is kept: said by readiness and the metrics. */
  readonly kind: "postgres" | "redis";
  /**
   * Takes a slot of the site's budget for one call (`token` names it), and a place in flight:
   * when fewer than `limit` calls went to the site in the last `windowMs` and fewer than
   * `maxInFlight` are in flight; the place lapses after `busyMs` unless given back.
   */
  take(
    siteId: number,
    token: string,
    o: { limit: number; background: boolean; windowMs: number; maxInFlight: number; busyMs: number },
  ): Promise<SharedTake>;
  /** The call ended: its place in flight is free (its slot stays for the window). */
  done(siteId: number, token: string): Promise<void>;
  /**
   * Puts this instance's calls of the last `windowMs` into the site's window, each once (by its
   * token): those sent while the store was away, and those a restarted store forgot.
   */
  restore(siteId: number, calls: readonly SentCall[], windowMs: number): Promise<void>;
  /** The site answered 429: no instance calls it for `ms`. */
  pause(siteId: number, ms: number): Promise<void>;
  /**
   * Whether the store may have lost its windows since this was last asked (a Redis connection
   * made again: the server may have restarted empty). Until asked, `take` refuses.
   */
  reconnected?(): boolean;
  /** Notes this instance alive; answers how many instances were seen in the last minute. */
  beat(instance: string): Promise<number>;
  close(): Promise<void>;
};
