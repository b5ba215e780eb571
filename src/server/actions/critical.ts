/**
 * new-api's critical limit (gateway-actions.md §2.1): redeeming a code and revealing a key share
 * one bucket of 20 calls per 20 minutes per client address, and this service is one address to
 * every site. The calls made here are counted per site, so a person is told before the site
 * refuses, and when to come back.
 */
import { processState, type StatePart } from "../core/process-state";

export const CRITICAL_LIMIT = { calls: 20, windowMs: 20 * 60_000 } as const;

/** When each map of calls was last swept (recentIn). */
const sweptAt = new WeakMap<object, number>();

/**
 * The times of `key`'s calls within the window (the list kept, to add to). Keys whose calls all
 * left it are forgotten, at most once a window, so the map holds about those that called lately.
 */
function recentIn<K>(all: Map<K, number[]>, key: K, windowMs: number, now: number): number[] {
  if (now - (sweptAt.get(all) ?? 0) >= windowMs) {
    sweptAt.set(all, now);
    for (const [k, calls] of all) if ((calls.at(-1) ?? 0) <= now - windowMs) all.delete(k);
  }
  const kept = (all.get(key) ?? []).filter((at) => at > now - windowMs);
  all.set(key, kept);
  return kept;
}

const CALLS: StatePart<Map<number, number[]>> = { name: "critical-calls", create: () => new Map() };

const recent = (siteId: number, now: number) => {
  const all = processState().get(CALLS);
  return recentIn(all, siteId, CRITICAL_LIMIT.windowMs, now);
};

/** How many critical calls the site has left for this service now, and when the next one frees. */
export function criticalLeft(siteId: number, now = Date.now()): { left: number; nextAt: number | null } {
  const calls = recent(siteId, now);
  const left = Math.max(0, CRITICAL_LIMIT.calls - calls.length);
  return { left, nextAt: calls.length > 0 ? (calls[0] as number) + CRITICAL_LIMIT.windowMs : null };
}

/** Takes one of the site's critical calls; false (and nothing taken) when none is left. */
export function takeCritical(siteId: number, now = Date.now()): boolean {
  const calls = recent(siteId, now);
  if (calls.length >= CRITICAL_LIMIT.calls) return false;
  calls.push(now);
  return true;
}

/** `约 7 分钟后`: when the site takes the next critical call. */
export function retryIn(nextAt: number | null, now = Date.now()): string {
  const minutes = nextAt === null ? 1 : Math.max(1, Math.ceil((nextAt - now) / 60_000));
  return `约 ${minutes} 分钟后`;
}

/** Writes one account may make per minute through this service (a pasted code sent twice, a script in a loop). */
const WRITES_PER_MINUTE = 6;

const WRITES: StatePart<Map<string, number[]>> = { name: "account-writes", create: () => new Map() };

/**
 * Takes one of the account's writes of this minute: null when taken, else the refusal, saying when
 * the next one frees (nothing taken). Reads and key reveals are no writes (a reveal on new-api
 * spends the site's critical calls instead).
 */
export function takeWrite(account: string, now = Date.now()): string | null {
  const kept = recentIn(processState().get(WRITES), account, 60_000, now);
  if (kept.length >= WRITES_PER_MINUTE) {
    const seconds = Math.max(1, Math.ceil(((kept[0] as number) + 60_000 - now) / 1000));
    return `操作过于频繁：每个账户每分钟最多 ${WRITES_PER_MINUTE} 次写操作，请 ${seconds} 秒后再试`;
  }
  kept.push(now);
  return null;
}

/** Gives back the account's last write of this minute (the action was refused before anything was sent). */
export function giveBackWrite(account: string): void {
  processState().get(WRITES).get(account)?.pop();
}
