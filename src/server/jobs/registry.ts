/**
 * This process's background jobs, by name: each runs every `everyMs`, never twice at once, and
 * stops with the process state (core/process-state.ts) that holds its timer.
 */
import { logError } from "../core/log";
import { processState, type StatePart } from "../core/process-state";

const JOBS: StatePart<Map<string, NodeJS.Timeout>> = {
  name: "jobs",
  create: () => new Map(),
  dispose: (jobs) => {
    for (const timer of jobs.values()) clearInterval(timer);
  },
};

/** Starts the job unless it runs already; a failure is logged under its name and the next tick tries again. */
export function startJob(name: string, everyMs: number, run: () => Promise<void>): void {
  const jobs = processState().get(JOBS);
  if (jobs.has(name)) return;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    run()
      .catch((error: unknown) => logError(name, error))
      .finally(() => {
        running = false;
      });
  }, everyMs);
  timer.unref();
  jobs.set(name, timer);
}
