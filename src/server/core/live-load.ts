/**
 * Live requests come before background work (docs/design.md 18). The HTTP server counts the
 * requests it answers; background work (a ledger sync between its steps, the price reads between
 * their batches) asks for its turn with what its last step cost, and while live requests come it
 * waits RATIO times that long. The waits of all the process's background work follow one another
 * (each starts where the ones before it end), so together it takes at most about a 1/(RATIO+1)
 * share of the process beside live requests, however many syncs run at once; with none in the last
 * second it goes on at once. In a process without the server (tests, scripts) nothing is counted
 * and nothing waits.
 */
import { processState, type StatePart } from "./process-state";

/** While live requests come, background work waits this many times what its last step took. */
const RATIO = 4;
/** The longest such wait: background work is slowed, never stopped. */
const MAX_YIELD_MS = 1_000;
/** Live requests seen this recently make background work wait. */
const RECENT_MS = 1_000;

const LIVE: StatePart<{ inFlight: number; lastAt: number; freeAt: number }> = {
  name: "live-load",
  // freeAt: when the waits already handed out end (ms since the epoch).
  create: () => ({ inFlight: 0, lastAt: 0, freeAt: 0 }),
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
 * handled, and while live requests come, after RATIO × `stepMs` counted from the end of the waits
 * already handed out (one wait at most MAX_YIELD_MS: background work is slowed, never stopped).
 */
export async function yieldToLive(stepMs: number): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  const live = processState().get(LIVE);
  const now = Date.now();
  if (live.inFlight === 0 && now - live.lastAt > RECENT_MS) return;
  live.freeAt = Math.min(now + MAX_YIELD_MS, Math.max(now, live.freeAt) + Math.max(0, stepMs) * RATIO);
  const wait = live.freeAt - now;
  if (wait > 0) await new Promise<void>((resolve) => setTimeout(resolve, wait).unref());
}

/** A background task's turns, each after the time since its last one (its step), as yieldToLive. */
export function backgroundPace(): () => Promise<void> {
  let last = performance.now();
  return async () => {
    await yieldToLive(performance.now() - last);
    last = performance.now();
  };
}
