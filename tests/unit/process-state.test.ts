import { afterEach, describe, expect, it, vi } from "vitest";
import { freshProcessState, processState, type StatePart } from "../../src/server/core/process-state";
import { startJob } from "../../src/server/jobs/registry";

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
});
