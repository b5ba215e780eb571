/**
 * This process's background jobs, by name: each runs every `everyMs`, never twice at once, and
 * stops with the process state (core/process-state.ts) that holds its timer. A run is handed a
 * signal that aborts when the process stops: long work (a ledger backfill) ends at its next safe
 * point and lets go of what it holds.
 */
import { logError } from "../core/log";
import { beat } from "../core/heartbeat";
import { countJobRun } from "../core/metrics";
import { processState, type StatePart } from "../core/process-state";
import { stopKeptWork } from "../core/stopping";
import { sqliteLost } from "../db/sqlite-guard";

type Jobs = {
  timers: Map<string, NodeJS.Timeout>;
  running: Set<Promise<void>>;
  stop: AbortController;
};

const JOBS: StatePart<Jobs> = {
  name: "jobs",
  create: () => ({ timers: new Map(), running: new Set(), stop: new AbortController() }),
  dispose: (jobs) => {
    for (const timer of jobs.timers.values()) clearInterval(timer);
    jobs.timers.clear();
    jobs.stop.abort();
  },
};

/** Starts the job unless it runs already; a failure is logged under its name and the next tick tries again. */
export function startJob(name: string, everyMs: number, run: (signal: AbortSignal) => Promise<void>): void {
  const jobs = processState().get(JOBS);
  if (jobs.timers.has(name)) return;
  let running = false;
  const timer = setInterval(() => {
    beat(name);
    // A SQLite file deleted under the server: nothing is written where nobody will find it.
    if (running || jobs.stop.signal.aborted || sqliteLost()) return;
    running = true;
    const started = Date.now();
    const done: Promise<void> = run(jobs.stop.signal)
      .then(() => countJobRun(name, started, true))
      .catch((error: unknown) => {
        countJobRun(name, started, false);
        logError(name, error);
      })
      .finally(() => {
        running = false;
        jobs.running.delete(done);
      });
    jobs.running.add(done);
  }, everyMs);
  timer.unref();
  jobs.timers.set(name, timer);
}

/**
 * Work a run started and left going (a look of the runner starts syncs and ends): it is waited for
 * when the process stops, like a run; a failure is logged under `name`.
 */
export function trackJobWork(name: string, work: Promise<unknown>): void {
  const jobs = processState().get(JOBS);
  const done: Promise<void> = work
    .then(() => undefined)
    .catch((error: unknown) => logError(name, error))
    .finally(() => jobs.running.delete(done));
  jobs.running.add(done);
}

/**
 * Stops the jobs: no run starts from now on, the runs under way are told to stop and are waited
 * for, at most `graceMs`. Returns whether they all ended in time.
 */
export async function stopJobs(graceMs: number): Promise<boolean> {
  const jobs = processState().get(JOBS);
  for (const timer of jobs.timers.values()) clearInterval(timer);
  jobs.timers.clear();
  jobs.stop.abort();
  // Work started by requests (a sign-in's sync) stops with the jobs and is waited for with them.
  const kept = stopKeptWork();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), graceMs);
  });
  const ended = await Promise.race([Promise.all([...jobs.running, kept]).then(() => true), late]);
  clearTimeout(timer);
  return ended;
}
