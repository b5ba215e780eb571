/**
 * When each background job last looked for work in this process (the job runner beats on every
 * tick, whether or not it finds any): readiness says a runner that stopped beating.
 */
import { processState, type StatePart } from "./process-state";

const BEATS: StatePart<Map<string, number>> = { name: "job-heartbeats", create: () => new Map() };

export function beat(job: string, now = Date.now()): void {
  processState().get(BEATS).set(job, now);
}

/** The jobs' last ticks (ms since the epoch). */
export function heartbeats(): ReadonlyMap<string, number> {
  return processState().get(BEATS);
}
