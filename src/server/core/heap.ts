/**
 * How full this process's heap is, as readiness and the log say it: the heap in use now, and what
 * stayed in use after the last full collection (the live set: garbage not yet collected makes
 * the first swing, the second is what the process really holds). A live set past HIGH_SHARE of
 * the limit makes the instance not ready, long before V8 gives up, and is logged once
 * (`heap.high`, then `heap.ok` when it is back under LOW_SHARE); a process that still reaches
 * the limit is restarted by `npm start` and the cluster primary, which log why.
 */
import { PerformanceObserver, constants } from "node:perf_hooks";
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";
import { logEvent } from "./log";

/** A live set past this share of the heap limit: not ready (a load balancer sends no more). */
const HIGH_SHARE = 0.75;
/** Back under this share: ready again (a gap, so a live set near the line does not flap). */
const LOW_SHARE = 0.6;
/** The heap in use now past this share: not ready whatever the last collection left. */
const NOW_SHARE = 0.9;

type HeapWatch = { observer: PerformanceObserver | null; liveShare: number; high: boolean };
/**
 * One per process, on globalThis: the server entry starts the watch and the app's routes (bundled
 * apart, with their own copy of this module) read it.
 */
const WATCH: HeapWatch = ((globalThis as { gdHeapWatch?: HeapWatch }).gdHeapWatch ??= {
  observer: null,
  liveShare: 0,
  high: false,
});

/**
 * The limit V8 ends the process at: `--max-old-space-size` where the process was given one (the
 * old generation's; V8's heap_size_limit adds the young generation's reserve, which never fills
 * it), else the heap's whole limit.
 */
function oldLimitBytes(): number {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)];
  const mb = flags.map((f) => /^--max-old-space-size=(\d+)$/.exec(f)?.[1]).findLast((v) => v !== undefined);
  return mb ? Number(mb) * 2 ** 20 : getHeapStatistics().heap_size_limit;
}

/** The old generation in use (what the limit counts): every space but the young generation's. */
function oldUsedBytes(): number {
  return getHeapSpaceStatistics()
    .filter((s) => !s.space_name.startsWith("new_"))
    .reduce((sum, s) => sum + s.space_used_size, 0);
}

const shareOf = (bytes: number) => Math.round((bytes / oldLimitBytes()) * 1000) / 1000;

/** Notes the live set after a full collection: past HIGH_SHARE the process says so, once. */
function noteLiveSet(usedBytes: number): void {
  WATCH.liveShare = shareOf(usedBytes);
  if (!WATCH.high && WATCH.liveShare > HIGH_SHARE) {
    WATCH.high = true;
    logEvent("heap.high", {
      liveShare: WATCH.liveShare,
      limitMb: Math.round(oldLimitBytes() / 2 ** 20),
    });
  } else if (WATCH.high && WATCH.liveShare < LOW_SHARE) {
    WATCH.high = false;
    logEvent("heap.ok", { liveShare: WATCH.liveShare });
  }
}

/** Starts watching the full collections of this process (once; the server calls it at start). */
export function watchHeap(): void {
  if (WATCH.observer) return;
  WATCH.observer = new PerformanceObserver((list) => {
    const major = list
      .getEntries()
      .some(
        (e) =>
          (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR,
      );
    if (major) noteLiveSet(oldUsedBytes());
  });
  WATCH.observer.observe({ entryTypes: ["gc"] });
}

/** The heap as readiness reports it: the shares now and after the last full collection, and why not ready. */
export function heapState(): { usedShare: number; liveShare: number; problem: string | null } {
  const usedShare = shareOf(oldUsedBytes());
  const problem =
    WATCH.high || usedShare > NOW_SHARE
      ? `内存将满（已用堆内存 ${Math.round(usedShare * 100)}%，上次完整回收后仍占 ${Math.round(WATCH.liveShare * 100)}%）`
      : null;
  return { usedShare, liveShare: WATCH.liveShare, problem };
}

/** Why a server process ended by itself, in words (V8 aborts when the heap limit is reached). */
export function exitReason(code: number | null, signal: string | null): string {
  if (signal === "SIGABRT" || code === 134) return "内存耗尽（达到堆内存上限）";
  if (signal === "SIGKILL" || code === 137) return "被强制结束（可能是系统内存不足）";
  return signal ? `收到信号 ${signal}` : `退出码 ${code ?? "?"}`;
}
