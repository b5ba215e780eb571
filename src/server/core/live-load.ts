/**
 * Live requests come before background work (docs/design.md 18). The HTTP server counts the
 * requests it answers; background work (a ledger sync between its steps, the runner's looks, the
 * price reads before each read) asks for its turn with what its last step cost. For the first
 * LIVE_FIRST_SECONDS of a stretch of live requests (a page and the ones a person opens after it)
 * it takes no turn at all; past that, a steady load, each waits RATIO times its step. The waits of
 * all the process's background work follow one another (each starts where the ones before it end,
 * however many are handed out), so together it takes at most about a 1/(RATIO+1) share of the
 * process beside a steady load, however many syncs run at once; with no live request in the last
 * second it goes on at once, and every wait handed out ends then too. In a process without the
 * server (tests, scripts) nothing is counted and nothing waits.
 *
 * The instances of a deployment share their store (and often their machine), so a live request on
 * one makes every one's background wait: an instance answering live requests says so to the others
 * (jobs/broadcast.ts, at most every TELL_EVERY_MS), and each treats the word as a live request of its
 * own. Probes (health, readiness, metrics) are nobody waiting: they count nowhere.
 */
import { env } from "./env";
import { processState, type StatePart } from "./process-state";

/** While live requests come, background work waits this many times what its last step took. */
const RATIO = 4;
/** The most one step adds to the waits (a step that waited long on its site is not all CPU). */
const MAX_YIELD_MS = 1_000;
/** How often a wait looks whether live requests stopped coming, to go on at once when they did. */
const QUIET_LOOK_MS = 100;
/** Live requests seen this recently make background work wait. */
const RECENT_MS = 1_000;
/** While live requests come, the other instances are told at most this often (well within RECENT_MS). */
const TELL_EVERY_MS = 400;
/** The routes of probes and monitoring, which no person waits for. */
const PROBES = new Set(["/api/health", "/api/ready", "/api/metrics"]);

type Live = {
  inFlight: number;
  /** The last live request here began or ended (ms since the epoch). */
  lastAt: number;
  /** The last word from another instance that it answers live requests. */
  elsewhereAt: number;
  /** When the present stretch of live requests (here or elsewhere, none a second apart) began. */
  since: number;
  /** When the waits already handed out end. */
  freeAt: number;
  /** When the others were last told, and how (null: no other instance to tell). */
  toldAt: number;
  tell: (() => void) | null;
};

const LIVE: StatePart<Live> = {
  name: "live-load",
  create: () => ({ inFlight: 0, lastAt: 0, elsewhereAt: 0, since: 0, freeAt: 0, toldAt: 0, tell: null }),
};

/** Whether a request to `url` (path and query) is a probe's: it does not count as live. */
export function isProbe(url: string): boolean {
  const q = url.indexOf("?");
  return PROBES.has(q < 0 ? url : url.slice(0, q));
}

function seen(live: Live): void {
  const now = Date.now();
  live.lastAt = now;
  if (live.tell && now - live.toldAt >= TELL_EVERY_MS) {
    live.toldAt = now;
    live.tell();
  }
}

/** A live request has come in; the function returned says it was answered (once). */
export function liveRequest(): () => void {
  const live = processState().get(LIVE);
  begins(live);
  live.inFlight++;
  seen(live);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    live.inFlight--;
    seen(live);
  };
}

/** How the other instances are told of live requests here (jobs/broadcast.ts installs it at start). */
export function tellLiveWith(tell: (() => void) | null): void {
  processState().get(LIVE).tell = tell;
}

/** Another instance said it answers live requests: background work here waits as for its own. */
export function liveElsewhere(): void {
  const live = processState().get(LIVE);
  begins(live);
  live.elsewhereAt = Date.now();
}

/** A live request here or elsewhere: after a quiet moment, a new stretch of them begins now. */
function begins(live: Live): void {
  if (isQuiet(live)) live.since = Date.now();
}

/**
 * Whether no live request came here or at another instance in the last second: housekeeping that
 * can wait (the purge of ended sessions) takes more than its least only then.
 */
export function quiet(): boolean {
  return isQuiet(processState().get(LIVE));
}

function isQuiet(live: Live): boolean {
  return live.inFlight === 0 && Date.now() - Math.max(live.lastAt, live.elsewhereAt) > RECENT_MS;
}

/**
 * How much longer background work that yields is held, ms: the rest of the present stretch's first
 * LIVE_FIRST_SECONDS while live requests come; 0 when it may go. The sites' gates ask it before
 * letting such a call go (gateway/gate.ts), so a budget slot that comes while people are served
 * sends nothing.
 */
export function heldFor(): number {
  const live = processState().get(LIVE);
  if (isQuiet(live)) return 0;
  return Math.max(0, live.since + env().LIVE_FIRST_SECONDS * 1000 - Date.now());
}

/** A wait that keeps no process alive. */
const nap = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/**
 * Resolves once background work that yields may go (heldFor is 0): at once when it may, else when
 * the stretch's first seconds are over or live requests stop coming, whichever is first, and after
 * `atMostMs` at the latest. The background's pool waits on it before each statement (db/client.ts).
 */
export async function unheld(atMostMs = Infinity): Promise<void> {
  const until = Date.now() + atMostMs;
  for (let left = heldFor(); left > 0; left = heldFor()) {
    const wait = Math.min(left, QUIET_LOOK_MS, until - Date.now());
    if (wait <= 0) return;
    await nap(wait);
  }
}

/**
 * Background work's turn after a step that took `stepMs`: once the I/O already waiting has been
 * handled, and while live requests come, after RATIO × `stepMs` (at most MAX_YIELD_MS) counted from
 * the end of the waits already handed out, and not within the stretch's first LIVE_FIRST_SECONDS.
 * With many tasks at once the waits grow with their number, so the share holds; the moment live
 * requests stop, every wait ends.
 */
export function yieldToLive(stepMs: number): Promise<void> {
  return takeTurn(stepMs, true);
}

/**
 * The turn of an answer come back to background work, before it is taken in (parsed, stored):
 * nothing in a stretch's first seconds, and behind the waits already handed out, adding none.
 */
export function answerTurn(): Promise<void> {
  return takeTurn(0, true);
}

/**
 * The turn after a step of `stepMs`: queued behind the waits already handed out and after the
 * stretch's first LIVE_FIRST_SECONDS (`queued`), or counted from now. Ends early, for every
 * waiter, once nobody is served any more.
 */
async function takeTurn(stepMs: number, queued: boolean): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  const live = processState().get(LIVE);
  if (isQuiet(live)) return;
  const now = Date.now();
  const wait = Math.min(MAX_YIELD_MS, Math.max(0, stepMs) * RATIO);
  const first = live.since + env().LIVE_FIRST_SECONDS * 1000;
  const until = queued ? (live.freeAt = Math.max(now, live.freeAt, first) + wait) : now + wait;
  for (let left = until - now; left > 0; left = until - Date.now()) {
    await nap(Math.min(left, QUIET_LOOK_MS));
    if (isQuiet(live)) {
      live.freeAt = Date.now();
      return;
    }
  }
}

/**
 * A task's turns, each after the time since its last one (its step), as yieldToLive. A sync that
 * a person started (`own`: a sign-in, an added account, an action, a refresh) waits RATIO × its
 * step from its own turn, neither held for the stretch's first seconds nor behind the runner's
 * queue: what it reads is what that person is about to look at.
 */
export function backgroundPace(own = false): () => Promise<void> {
  let last = performance.now();
  return async () => {
    await takeTurn(performance.now() - last, !own);
    last = performance.now();
  };
}
