/**
 * What this process keeps in memory between requests: the sites' gates, the live-data cache, the
 * probes under way, the statement renders, the background jobs' timers. One object per process,
 * kept on globalThis so that every bundle of the server (the route handlers, instrumentation's
 * jobs) sees the same one; each module declares its part and reads it from here, so no module
 * holds state of its own. A part is known by its name, so a module bundled twice (the server
 * entry and the route handlers) still finds the one part. `freshProcessState()` replaces the
 * whole, ending the old one's timers.
 */

/** A module's part of the process state: how it starts, and how it ends (timers). */
export type StatePart<T> = { readonly name: string; create(): T; dispose?(value: T): void };

export class ProcessState {
  private readonly parts = new Map<string, { part: StatePart<unknown>; value: unknown }>();

  /** The part, created on first use. */
  get<T>(part: StatePart<T>): T {
    let held = this.parts.get(part.name);
    if (!held) {
      held = { part, value: part.create() };
      this.parts.set(part.name, held);
    }
    return held.value as T;
  }

  dispose(): void {
    for (const { part, value } of this.parts.values()) part.dispose?.(value);
    this.parts.clear();
  }
}

const holder = globalThis as unknown as { gdProcessState?: ProcessState };

/** This process's state, created on first use (by the server entry's first request or job). */
export function processState(): ProcessState {
  holder.gdProcessState ??= new ProcessState();
  return holder.gdProcessState;
}

/** A new, empty state for the process, the old one's timers ended (a test's clean slate). */
export function freshProcessState(): ProcessState {
  holder.gdProcessState?.dispose();
  holder.gdProcessState = new ProcessState();
  return holder.gdProcessState;
}
