import { beforeEach, describe, expect, it } from "vitest";
import { liveRequest, yieldToLive } from "../../src/server/core/live-load";
import { freshProcessState } from "../../src/server/core/process-state";

/** Background work's turn (core/live-load.ts): at once when nobody asks, slowed while live requests come. */
describe("background work beside live requests", () => {
  beforeEach(() => freshProcessState());

  const settles = (p: Promise<void>, ms: number) =>
    Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

  it("goes on at once while no live request came in the last second", async () => {
    expect(await settles(yieldToLive(50), 150)).toBe(true);
  });

  it("waits four times its last step while a live request is in flight or just answered, at most a second", async () => {
    const answered = liveRequest();
    let t = performance.now();
    await yieldToLive(50);
    expect(performance.now() - t).toBeGreaterThanOrEqual(195);
    answered();
    answered(); // said twice: counted once
    t = performance.now();
    await yieldToLive(5_000);
    expect(performance.now() - t).toBeGreaterThanOrEqual(995);
    expect(performance.now() - t).toBeLessThan(3_000);
    // A second after the last answer, background work goes on at once again.
    await new Promise((r) => setTimeout(r, 1_050));
    expect(await settles(yieldToLive(50), 150)).toBe(true);
  });
});
