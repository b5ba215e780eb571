/**
 * Work started outside the job runner that nobody waits for (a sign-in's first ledger sync): it
 * is handed the process's stop signal, ends at its next safe point when the process stops, and
 * is waited for with the jobs (jobs/registry.ts stopJobs), so no call to a site outlives the drain.
 */
import { processState, type StatePart } from "./process-state";

const STOPPING: StatePart<{ stop: AbortController; running: Set<Promise<unknown>> }> = {
  name: "stopping",
  create: () => ({ stop: new AbortController(), running: new Set() }),
  dispose: (s) => s.stop.abort(),
};

/** Aborts when the process stops. */
export function stopSignal(): AbortSignal {
  return processState().get(STOPPING).stop.signal;
}

/** Keeps `work` until it ends, so that a stopping process waits for it. */
export function keepUntilStopped<T>(work: Promise<T>): Promise<T> {
  const { running } = processState().get(STOPPING);
  const kept = work.finally(() => running.delete(kept));
  running.add(kept);
  return kept;
}

/** Tells the kept work to stop; resolves when it all ended (failures included). */
export async function stopKeptWork(): Promise<void> {
  const s = processState().get(STOPPING);
  s.stop.abort();
  await Promise.allSettled([...s.running]);
}
