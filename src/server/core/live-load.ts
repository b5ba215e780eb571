/**
 * Live requests come before background work (docs/design.md 18). The HTTP server counts the
 * requests it answers; background work (a ledger sync, between the slices it reads) asks for its
 * turn with what its last step cost, and while live requests come it waits RATIO times that
 * long, so it takes at most a 1/(RATIO+1) share of the process beside them; with none in the
 * last second it goes on at once. In a process without the server (tests, scripts) nothing is
 * counted and nothing waits.
 */
import { processState, type StatePart } from "./process-state";

/** While live requests come, background work waits this many times what its last step took. */
const RATIO = 4;
/** The longest such wait: background work is slowed, never stopped. */
const MAX_YIELD_MS = 1_000;
/** Live requests seen this recently make background work wait. */
const RECENT_MS = 1_000;

const LIVE: StatePart<{ inFlight: number; lastAt: number }> = {
  name: "live-load",
  create: () => ({ inFlight: 0, lastAt: 0 }),
};

/** A live request has come in; the function returned says it was answered (once). */
export function liveRequest(): () => void {
  const live = processState().get(LIVE);
  live.inFlight++;
  live.lastAt = Date.now();
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    live.inFlight--;
    live.lastAt = Date.now();
  };
}

/**
 * Background work's turn after a step that took `stepMs`: once the I/O already waiting has been
 * handled, and while live requests come, after RATIO × `stepMs` (at most MAX_YIELD_MS).
 */
export async function yieldToLive(stepMs: number): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  const live = processState().get(LIVE);
  if (live.inFlight === 0 && Date.now() - live.lastAt > RECENT_MS) return;
  const wait = Math.min(MAX_YIELD_MS, Math.max(0, stepMs) * RATIO);
  if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait).unref());
}
