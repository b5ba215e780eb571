import { afterEach, describe, expect, it, vi } from "vitest";
import { freshProcessState, processState, type StatePart } from "../../src/server/core/process-state";
import { startJob, stopJobs } from "../../src/server/jobs/registry";
import { nextSync, syncDue } from "../../src/server/ledger/schedule";

afterEach(() => {
  freshProcessState();
  vi.useRealTimers();
});

describe("the process state", () => {
  it("holds one part per declaration, created on first use, the same for every caller", () => {
    const created: number[] = [];
    const part: StatePart<{ n: number }> = { name: "counter", create: () => (created.push(1), { n: 0 }) };
    processState().get(part).n++;
    processState().get(part).n++;
    expect([processState().get(part).n, created.length]).toEqual([2, 1]);
    freshProcessState();
    expect(processState().get(part).n).toBe(0);
  });

  it("ends the jobs of the state it replaces, and starts a job once however often asked", async () => {
    vi.useFakeTimers();
    let runs = 0;
    const job = () => startJob("tick", 1000, () => Promise.resolve(void runs++));
    job();
    job();
    await vi.advanceTimersByTimeAsync(3000);
    expect(runs).toBe(3);
    freshProcessState();
    await vi.advanceTimersByTimeAsync(3000);
    expect(runs).toBe(3);
  });

  it("finds a part by its name, so a module bundled twice still shares it", () => {
    const a: StatePart<{ n: number }> = { name: "shared", create: () => ({ n: 0 }) };
    const b: StatePart<{ n: number }> = { name: "shared", create: () => ({ n: 100 }) };
    processState().get(a).n++;
    expect(processState().get(b).n).toBe(1);
  });

  it("stops the jobs: none starts again, a run under way is told to stop and waited for", async () => {
    let runs = 0;
    let stoppedInside = false;
    startJob("long", 20, async (signal) => {
      runs++;
      while (!signal.aborted) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 30));
      stoppedInside = true;
    });
    await new Promise((r) => setTimeout(r, 60));
    expect(await stopJobs(2000)).toBe(true);
    expect([runs, stoppedInside]).toEqual([1, true]);
    await new Promise((r) => setTimeout(r, 60));
    expect(runs).toBe(1);
  });

  it("gives up waiting for a run that does not stop after the grace", async () => {
    startJob("stuck", 10, () => new Promise(() => undefined));
    await new Promise((r) => setTimeout(r, 30));
    expect(await stopJobs(50)).toBe(false);
  });
});

describe("the ledger syncs' schedule", () => {
  const INTERVAL = 10 * 60_000;
  const TICK = 60_000;

  it("spreads 200 accounts saved at one moment over the interval, each synced once per interval", () => {
    const keys = Array.from({ length: 200 }, (_, i) => `${1 + (i % 10)}:${1000 + i}`);
    const t0 = Date.UTC(2026, 10, 23, 12, 0, 0);
    const synced = new Map(keys.map((k) => [k, 0]));
    const times = new Map<string, number[]>(keys.map((k) => [k, []]));
    const perTick: number[] = [];
    for (let now = t0; now <= t0 + 6 * INTERVAL; now += TICK) {
      let n = 0;
      for (const k of keys) {
        if (!syncDue(k, synced.get(k) ?? 0, INTERVAL, now)) continue;
        synced.set(k, now);
        times.get(k)?.push(now);
        n++;
      }
      perTick.push(n);
    }
    // The first tick takes all (never synced); after that each minute takes about a tenth.
    expect(perTick[0]).toBe(200);
    const later = perTick.slice(2 * (INTERVAL / TICK) + 1);
    expect(Math.max(...later)).toBeLessThanOrEqual(40);
    expect(later.reduce((a, b) => a + b, 0) / later.length).toBeCloseTo(20, 0);
    for (const [k, at] of times) {
      const gaps = at.slice(1).map((t, i) => t - (at[i] ?? 0));
      // On the way to its moment at most two shorter gaps (never under half an interval), then exactly the interval.
      expect(
        gaps.slice(2).every((g) => g === INTERVAL),
        k,
      ).toBe(true);
      expect(
        gaps.every((g) => g >= INTERVAL / 2 && g <= INTERVAL + TICK),
        k,
      ).toBe(true);
    }
  });

  it("is due when never synced, and gives every account the same moment on every instance", () => {
    expect(syncDue("3:42", 0, INTERVAL, Date.now())).toBe(true);
    const now = Date.now();
    expect(syncDue("3:42", now - INTERVAL, INTERVAL, now)).toBe(true);
    expect(syncDue("3:42", now - 1000, INTERVAL, now)).toBe(false);
  });

  it("says when an account syncs next: the first moment it is due", () => {
    const now = Date.UTC(2026, 10, 23, 12, 0, 0);
    for (const key of [
      "1:1",
      "2:99",
      "7:12345",
      ...Array.from({ length: 60 }, (_, i) => `${1 + (i % 4)}:${500 + i}`),
    ]) {
      for (const ago of [0, 60_000, 4 * 60_000, 9 * 60_000, 20 * 60_000]) {
        const syncedAt = now - ago;
        const next = nextSync(key, syncedAt, INTERVAL, now);
        expect(syncDue(key, syncedAt, INTERVAL, next), `${key} ${ago}`).toBe(true);
        if (next > now) expect(syncDue(key, syncedAt, INTERVAL, next - 1), `${key} ${ago}`).toBe(false);
        expect(next - now).toBeLessThanOrEqual(INTERVAL);
      }
    }
  });
});
