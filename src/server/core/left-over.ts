/**
 * Writes a store outage kept from happening that must not be left to time out: the release of a
 * lease (a job's, a ledger sync's) whose work ended while the store was out of reach, and when an
 * account held by the runner's claim is next due (else it waits for its hold to end). Kept in this
 * process and done once the store is back, at the job runner's next look (jobs/leases.ts
 * releaseLeftLeases), so the work the outage cut short goes on at once, not when the lease runs out.
 */
import { processState, type StatePart } from "./process-state";

const LEFT: StatePart<Map<string, () => Promise<unknown>>> = { name: "left-over", create: () => new Map() };

/** Keeps `work` (under `key`: a later one of the same key replaces it) for doLeftOvers. */
export function leaveForLater(key: string, work: () => Promise<unknown>): void {
  processState().get(LEFT).set(key, work);
}

/** Does what was left, in order; returns how many. Throws at the first that fails (the rest stay). */
export async function doLeftOvers(): Promise<number> {
  const left = processState().get(LEFT);
  let done = 0;
  for (const [key, work] of [...left]) {
    await work();
    left.delete(key);
    done++;
  }
  return done;
}
