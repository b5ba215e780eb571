/**
 * One intent, one effect: the same call again while the first is under way or just answered (a
 * double click, a client's retry of a slow POST) gets the first one's answer instead of sending,
 * creating or spending a second time. Kept per process: two clicks of one page reach the
 * instance its connection is kept open to.
 */
import { processState, type StatePart } from "./process-state";

/** How long after its answer a call still stands for its repeats. */
const ONCE_MS = 10_000;
/** The most calls remembered at once (the oldest are forgotten first). */
const KEPT = 10_000;

const CALLS: StatePart<Map<string, { answer: Promise<unknown>; until: number }>> = {
  name: "once-calls",
  create: () => new Map(),
};

/** `run` once for `key` within ONCE_MS of its answer; a repeat meanwhile gets the same answer. */
export function once<T>(key: string, run: () => Promise<T>, now = Date.now()): Promise<T> {
  const calls = processState().get(CALLS);
  for (const [k, call] of calls) {
    if (call.until > now && calls.size < KEPT) break;
    calls.delete(k);
  }
  const kept = calls.get(key);
  if (kept && kept.until > now) return kept.answer as Promise<T>;
  const call = { answer: Promise.resolve() as Promise<unknown>, until: Infinity };
  call.answer = run().finally(() => {
    call.until = Date.now() + ONCE_MS;
  });
  calls.set(key, call);
  return call.answer as Promise<T>;
}
