import { beforeEach, describe, expect, it } from "vitest";
import {
  backgroundPace,
  isProbe,
  liveElsewhere,
  liveRequest,
  tellLiveWith,
  unheld,
  yieldToLive,
} from "../../src/server/core/live-load";
import { freshProcessState } from "../../src/server/core/process-state";

// The first second of a stretch of live requests holds the background entirely (10 s by default).
process.env.LIVE_FIRST_SECONDS = "1";

/**
 * Background work's turn (core/live-load.ts): at once when nobody asks, none in a stretch's first
 * LIVE_FIRST_SECONDS, slowed after it while live requests keep coming.
 */
describe("background work beside live requests", () => {
  beforeEach(() => freshProcessState());

  const settles = (p: Promise<void>, ms: number) =>
    Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** A live request in flight past the stretch's first second: a steady load. */
  const steadyLoad = async () => {
    const answered = liveRequest();
    await sleep(1_020);
    return answered;
  };

  it("takes no turn in a stretch's first seconds, then its share; a person's own sync is not held", async () => {
    const answered = liveRequest();
    const t = performance.now();
    const own = backgroundPace(true);
    const runner = yieldToLive(50);
    await sleep(50);
    await own();
    // The person's own sync: its step's share, counted from now (4 × 50 ms), not held for the second.
    expect(performance.now() - t).toBeGreaterThanOrEqual(245);
    expect(performance.now() - t).toBeLessThan(800);
    await runner;
    // The runner's: after the first second, and then its share.
    expect(performance.now() - t).toBeGreaterThanOrEqual(1_195);
    expect(performance.now() - t).toBeLessThan(1_700);
    answered();
    // Quiet for a second: the next live request begins a new stretch, held again.
    await sleep(1_050);
    const again = liveRequest();
    const s = performance.now();
    await yieldToLive(50);
    expect(performance.now() - s).toBeGreaterThanOrEqual(1_195);
    again();
  });

  it("goes on at once while no live request came in the last second", async () => {
    expect(await settles(yieldToLive(50), 150)).toBe(true);
  });

  it("waits four times its last step while a live request is in flight or just answered, at most a second", async () => {
    const answered = await steadyLoad();
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

  it("hands out the waits of the process's background work one after another, however many ask", async () => {
    const answered = await steadyLoad();
    const t = performance.now();
    const ended: number[] = [];
    // Four syncs at once, each after a step of 50 ms: 200, 400, 600 and 800 ms, not all at 200.
    await Promise.all([0, 1, 2, 3].map(() => yieldToLive(50).then(() => ended.push(performance.now() - t))));
    expect(ended[0]).toBeGreaterThanOrEqual(195);
    expect(ended[0]).toBeLessThan(380);
    expect(ended[3]).toBeGreaterThanOrEqual(795);
    // Twelve at once: the last 2.4 s later, still a fifth of the time to the background.
    const s = performance.now();
    await Promise.all(Array.from({ length: 12 }, () => yieldToLive(50)));
    expect(performance.now() - s).toBeGreaterThanOrEqual(2_395);
    expect(performance.now() - s).toBeLessThan(3_000);
    // A sync a person started waits its own step's share, not behind the queue.
    const queued = Promise.all(Array.from({ length: 10 }, () => yieldToLive(50)));
    const own = backgroundPace(true);
    await new Promise((r) => setTimeout(r, 50));
    const o = performance.now();
    await own();
    expect(performance.now() - o).toBeGreaterThanOrEqual(195);
    expect(performance.now() - o).toBeLessThan(600);
    // Once nobody is served, every wait handed out ends within a tenth of a second of the quiet.
    answered();
    const q = performance.now();
    await queued;
    expect(performance.now() - q).toBeLessThan(1_300);
    // backgroundPace measures its own steps: the time since its last turn.
    await new Promise((r) => setTimeout(r, 1_050));
    const again = await steadyLoad();
    const pace = backgroundPace();
    await new Promise((r) => setTimeout(r, 60));
    const p = performance.now();
    await pace();
    expect(performance.now() - p).toBeGreaterThanOrEqual(235);
    again();
  });

  it("waits as well for another instance's live requests, said within the last second", async () => {
    liveElsewhere();
    const word = setInterval(liveElsewhere, 300);
    const t = performance.now();
    try {
      await yieldToLive(50);
    } finally {
      clearInterval(word);
    }
    // The word began a stretch: held its first second, then the share.
    expect(performance.now() - t).toBeGreaterThanOrEqual(1_195);
    await new Promise((r) => setTimeout(r, 1_050));
    expect(await settles(yieldToLive(50), 150)).toBe(true);
  });

  it("says when held work may go: the stretch's first second over, or a bound reached first", async () => {
    expect(await settles(unheld(), 50)).toBe(true);
    const answered = liveRequest();
    try {
      let t = performance.now();
      await unheld(200);
      expect(performance.now() - t).toBeGreaterThanOrEqual(195);
      expect(performance.now() - t).toBeLessThan(600);
      await unheld();
      expect(performance.now() - t).toBeGreaterThanOrEqual(995);
      // Past the first second, nothing is held.
      t = performance.now();
      await unheld();
      expect(performance.now() - t).toBeLessThan(50);
    } finally {
      answered();
    }
  });

  it("tells the other instances while live requests come, at most every 400 ms", async () => {
    let told = 0;
    tellLiveWith(() => told++);
    for (let i = 0; i < 20; i++) liveRequest()();
    expect(told).toBe(1);
    await new Promise((r) => setTimeout(r, 420));
    const answered = liveRequest();
    expect(told).toBe(2);
    answered();
    expect(told).toBe(2);
  });

  it("counts no probe as live: health, readiness and metrics", () => {
    for (const url of ["/api/health", "/api/ready", "/api/ready?x=1", "/api/metrics"]) expect(isProbe(url)).toBe(true);
    for (const url of ["/api/auth/me", "/api/readyz", "/", "/api/health/x"]) expect(isProbe(url)).toBe(false);
  });
});
