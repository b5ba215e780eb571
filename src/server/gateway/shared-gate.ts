/**
 * The deployment's shared store of the sites' budgets as the gate sees it (gate.ts): installed or
 * not, answering or not (each instance then on its share: the budget ÷ the instances seen in the
 * last minute), and this instance's beat in it.
 */
import { randomUUID } from "node:crypto";
import { logEvent } from "../core/log";
import { processState, type StatePart } from "../core/process-state";
import type { SharedBudget } from "../core/shared-budget";
import { KEPT_WINDOW_MS, assumeOthers, restoreWindows } from "./window";

/** How often this instance notes itself alive in the shared store. */
const BEAT_MS = 10_000;
/** A store that answers again is used after this long (every instance has given its calls back). */
const RETURN_MS = 2 * BEAT_MS;
/**
 * After this instance is back on the store, it keeps to its share this long: another instance may
 * still be on its own share, its calls of the meanwhile not yet in the store (it gives them back
 * at its beats), and the two shares together are the budget. By then every instance is back.
 */
const SETTLE_MS = KEPT_WINDOW_MS;
/** The deployment's shared store of the budgets, when one is installed, and whether it answers. */
type Shared = {
  backend: SharedBudget | null;
  /** This instance's name in the store's list of instances. */
  instance: string;
  /** Instances seen in the last minute (the fallback share divides by it). */
  instances: number;
  /**
   * What the store counted at each beat of the last minute: the instances seen are the most of
   * them, so a store that came back empty (it counts only those that beat since) does not hand
   * this instance the others' shares.
   */
  counts: Array<{ at: number; instances: number }>;
  /** Since when the store has not answered (each instance on its share meanwhile); null: it answers. */
  fallbackSince: number | null;
  /** Since when the store has answered every beat (null: the last one failed). */
  answeringSince: number | null;
  /** When this instance went back to the store after a fallback (its share holds SETTLE_MS more). */
  returnedAt: number | null;
  timer: NodeJS.Timeout | null;
};

const SHARED: StatePart<Shared> = {
  name: "gate-shared",
  create: () => ({
    backend: null,
    instance: randomUUID(),
    instances: 1,
    counts: [],
    fallbackSince: null,
    answeringSince: null,
    returnedAt: null,
    timer: null,
  }),
  dispose: (shared) => {
    if (shared.timer) clearInterval(shared.timer);
    void shared.backend?.close().catch(() => undefined);
  },
};

const sharedState = () => processState().get(SHARED);

/** The shared store when it is installed and answering; null: this process keeps the budgets. */
export function activeShared(): SharedBudget | null {
  const shared = sharedState();
  return shared.fallbackSince === null ? shared.backend : null;
}

/**
 * A waiting call's share while the store does not answer, and for SETTLE_MS after it answers
 * again: the budget ÷ the instances seen.
 */
export function fallbackShare(share: number, now = Date.now()): number {
  const shared = sharedState();
  const settling = shared.returnedAt !== null && now - shared.returnedAt < SETTLE_MS;
  return shared.backend && (shared.fallbackSince !== null || settling)
    ? Math.max(1, Math.floor(share / shared.instances))
    : share;
}

/** What the gate does when the store stops answering, and when it answers again. */
export type SharedHooks = { fallback: (instances: number) => void; shared: () => void };

/** The store did not answer: the gate goes on in this process, each line on its share. */
export function fallBack(error: unknown, onFallback: SharedHooks["fallback"]): void {
  const shared = sharedState();
  shared.answeringSince = null;
  if (!shared.backend || shared.fallbackSince !== null) return;
  shared.fallbackSince = Date.now();
  assumeOthers(shared.instances, shared.fallbackSince);
  logEvent("budget.fallback", {
    store: shared.backend.kind,
    instances: shared.instances,
    reason: error instanceof Error ? error.message : String(error),
  });
  onFallback(shared.instances);
}

/** The instances seen in the last minute: the most any beat of it counted (the store's own count, and before). */
function instancesSeen(shared: Shared, counted: number, now: number): number {
  shared.counts = shared.counts.filter((c) => now - c.at < KEPT_WINDOW_MS);
  shared.counts.push({ at: now, instances: Math.max(1, counted) });
  return Math.max(...shared.counts.map((c) => c.instances));
}

/**
 * Notes this instance alive; a store that answers again ends the fallback once it holds this
 * instance's calls of the window (a restarted Redis has forgotten everyone's).
 */
async function beatShared(hooks: SharedHooks): Promise<void> {
  const shared = sharedState();
  const backend = shared.backend;
  if (!backend) return;
  try {
    shared.instances = instancesSeen(shared, await backend.beat(shared.instance), Date.now());
    if (backend.reconnected?.()) fallBack(new Error("共享存储重新连接"), hooks.fallback);
    if (shared.fallbackSince !== null) await restoreWindows(backend);
  } catch (error) {
    fallBack(error, hooks.fallback);
    return;
  }
  // Every instance gives its calls back at its own beats: the store counts them all once it has
  // answered for two beats (each gave back what it sent meanwhile, too).
  shared.answeringSince ??= Date.now();
  if (shared.fallbackSince !== null && Date.now() - shared.answeringSince >= RETURN_MS) {
    logEvent("budget.shared", { store: backend.kind, afterMs: Date.now() - shared.fallbackSince });
    shared.fallbackSince = null;
    shared.returnedAt = Date.now();
    hooks.shared();
  }
}

/** Installs the shared store (null: none); this instance notes itself alive there every 10 s. */
export async function installSharedBudget(backend: SharedBudget | null, hooks: SharedHooks): Promise<void> {
  const shared = sharedState();
  if (shared.timer) clearInterval(shared.timer);
  shared.timer = null;
  shared.backend = backend;
  shared.fallbackSince = null;
  shared.returnedAt = null;
  if (!backend) return;
  await beatShared(hooks);
  shared.timer = setInterval(() => void beatShared(hooks), BEAT_MS);
  shared.timer.unref();
}

/** Where the budgets are kept and whether that store answers (readiness, metrics). */
export function sharedBudgetState(): {
  store: "memory" | "postgres" | "redis";
  fallback: boolean;
  instances: number;
} {
  const shared = sharedState();
  return {
    store: shared.backend?.kind ?? "memory",
    fallback: shared.backend !== null && shared.fallbackSince !== null,
    instances: shared.instances,
  };
}

/** The store installed, answering or not (a call's place in flight is given back to it either way). */
export function sharedBackend(): SharedBudget | null {
  return sharedState().backend;
}
