/**
 * What the live reads keep in this process (core/process-state.ts): the answers, bounded by bytes,
 * the reads under way, each account's live calls this minute, and what each site's token list
 * counts pages from.
 */
import { LRUCache } from "lru-cache";
import { processState, type StatePart } from "../core/process-state";

/**
 * Answers are cached by their size: at most CACHE_MAX_BYTES in all (least recently used out),
 * expired ones purged as they expire. Every text a site controls is cut to a bounded length on
 * the way in (gateway/reads.ts), so one answer is small; the bound holds whatever they hold.
 */
const CACHE_MAX_BYTES = 16 * 2 ** 20;
/** JSON's length in UTF-16 code units, two bytes each, and the entry's own keeping. */
const answerBytes = (value: object) => 2 * JSON.stringify(value).length + 512;

/**
 * This process's live-data state: the answers kept, the reads under way, each account's live
 * calls in the current minute, and which token lists turned out to count pages from 0.
 */
const LIVE: StatePart<{
  cache: LRUCache<string, object>;
  inFlight: Map<string, Promise<object>>;
  accountCalls: Map<string, { minute: number; count: number }>;
  /** Per site, this minute: the first account that made a live call, and whether another did too. */
  siteCallers: Map<number, { minute: number; first: string; others: boolean }>;
  /** The minute siteCallers and accountCalls were last rid of other minutes' entries. */
  swept: number;
  tokenPageBase: Map<string, boolean>;
  /** Tells the other instances what a write changed (null: this process is the deployment). */
  tell: ((prefix: string) => void) | null;
}> = {
  name: "site-data",
  create: () => ({
    cache: new LRUCache<string, object>({ maxSize: CACHE_MAX_BYTES, ttlAutopurge: true }),
    inFlight: new Map(),
    accountCalls: new Map(),
    siteCallers: new Map(),
    swept: 0,
    tokenPageBase: new Map(),
    tell: null,
  }),
  dispose: (live) => live.cache.clear(),
};
const live = () => processState().get(LIVE);

/** What each site's token list turned out to count pages from, once seen (new-api changed it in 2025). */
export const tokenPageBases = () => live().tokenPageBase;

/** One cached, shared computation per key. */
export async function cached<T extends object>(key: string, ttl: number, refresh: boolean, load: () => Promise<T>) {
  const { cache, inFlight } = live();
  if (!refresh) {
    const hit = cache.get(key);
    if (hit) return hit as T;
  }
  const running = inFlight.get(key);
  if (running) return (await running) as T;
  const promise = load();
  inFlight.set(key, promise);
  try {
    const value = await promise;
    // One answer larger than a tenth of the cache is served, not kept.
    const size = answerBytes(value);
    if (size <= CACHE_MAX_BYTES / 10) cache.set(key, value, { ttl, size });
    return value;
  } finally {
    inFlight.delete(key);
  }
}

/**
 * One account's live calls a minute on a site of this budget: half of it (a small budget, up to
 * 6: all of it, so a summary's three calls always fit), and never more than `cap`.
 */
export function accountShare(sitePerMinute: number, cap: number): number {
  return Math.min(cap, Math.max(Math.ceil(sitePerMinute / 2), Math.min(sitePerMinute, 6)));
}

/** The account's live calls sent this minute. */
export function callsThisMinute(accountKey: string, now = Date.now()): { minute: number; count: number } {
  const minute = Math.floor(now / 60_000);
  const entry = live().accountCalls.get(accountKey);
  return entry?.minute === minute ? entry : { minute, count: 0 };
}

/**
 * Whether an account other than this one made (or is waiting to make) a live call to the site
 * this minute: an account's share limits it only while others want the budget (docs/design.md 12).
 */
export function othersWant(siteId: number, accountKey: string, now = Date.now()): boolean {
  const entry = live().siteCallers.get(siteId);
  return entry?.minute === Math.floor(now / 60_000) && (entry.others || entry.first !== accountKey);
}

/** Counts one live call of the account (-1: one that was never sent after all). */
export function chargeAccount(accountKey: string, by: 1 | -1, now = Date.now()): void {
  const entry = callsThisMinute(accountKey, now);
  const state = live();
  const { siteCallers, accountCalls } = state;
  // Once a minute, what other minutes left is forgotten: these maps hold this minute's callers only.
  if (state.swept !== entry.minute) {
    state.swept = entry.minute;
    for (const [id, c] of siteCallers) if (c.minute !== entry.minute) siteCallers.delete(id);
    for (const [key, c] of accountCalls) if (c.minute !== entry.minute) accountCalls.delete(key);
  }
  if (by === 1) {
    const siteId = Number(accountKey.slice(0, accountKey.indexOf(":")));
    const seen = siteCallers.get(siteId);
    if (seen?.minute !== entry.minute)
      siteCallers.set(siteId, { minute: entry.minute, first: accountKey, others: false });
    else if (seen.first !== accountKey) seen.others = true;
  }
  // Live calls per account in the current minute: one account cannot spend its site's whole budget.
  accountCalls.set(accountKey, { minute: entry.minute, count: Math.max(0, entry.count + by) });
}

/**
 * Forgets every kept answer whose key starts with `prefix` (an account's, after a write changed
 * them), here and on every other instance of the deployment.
 */
export function forget(prefix: string): void {
  forgetHere(prefix);
  live().tell?.(prefix);
}

/** Forgets the kept answers under `prefix` in this process only (another instance's write). */
export function forgetHere(prefix: string): void {
  const { cache } = live();
  for (const key of [...cache.keys()]) if (key.startsWith(prefix)) cache.delete(key);
}

/** Forgets every kept answer (the word from the other instances may have been missed). */
export function forgetAll(): void {
  live().cache.clear();
}

/** How a write is told to the other instances (jobs/broadcast.ts installs it at start). */
export function tellOthersWith(tell: ((prefix: string) => void) | null): void {
  live().tell = tell;
}
