/**
 * What this process's commits last met (readiness, health.ts): a commit that failed for want of
 * space is remembered, a minute at most, even when the readiness probe's one small row and other
 * small writes still find room (the ledger's pages do not), until a ledger commit succeeds again
 * or readiness finds room for a write of a commit's size (health.ts).
 */
import { processState, type StatePart } from "../core/process-state";
import { isStorageFull } from "./errors";

const LAST_FULL: StatePart<{ at: number | null }> = { name: "store-full", create: () => ({ at: null }) };
/** A failed commit counts this long even when the probe's small write finds room. */
const FULL_REMEMBERED_MS = 60_000;

/** What a commit met (null: a ledger commit succeeded): a full store is remembered, that success forgets it. */
export function noteCommit(error: unknown): void {
  const state = processState().get(LAST_FULL);
  if (error === null) state.at = null;
  else if (isStorageFull(error)) state.at = Date.now();
}

/** Whether a commit failed for want of space within the last minute, with no ledger commit succeeding since. */
export function commitsFailFull(now = Date.now()): boolean {
  const at = processState().get(LAST_FULL).at;
  return at !== null && now - at < FULL_REMEMBERED_MS;
}
