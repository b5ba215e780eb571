import { describe, expect, it } from "vitest";
import { SPEED_BOUNDS, bucketOf, firstTokenMs, quantileMs } from "../../src/server/gateway/speed";

describe("speed buckets", () => {
  it("puts a time in the bucket whose upper bound it reaches, and above the last bound in the last", () => {
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(100)).toBe(0);
    expect(bucketOf(101)).toBe(1);
    expect(bucketOf(1000)).toBe(5);
    expect(bucketOf(300_001)).toBe(SPEED_BOUNDS.length);
  });

  it("reads a quantile inside its bucket, linearly", () => {
    const counts = Array<number>(SPEED_BOUNDS.length + 1).fill(0);
    counts[5] = 10; // (750, 1000]
    expect(quantileMs(counts, 0.5)).toBe(875);
    expect(quantileMs(counts, 0.9)).toBe(975);
    counts[0] = 10; // [0, 100]: the median is now at the first bucket's top
    expect(quantileMs(counts, 0.5)).toBe(100);
    expect(quantileMs(counts, 0.25)).toBe(50);
    expect(quantileMs(Array<number>(SPEED_BOUNDS.length + 1).fill(0), 0.5)).toBeNull();
    const slow = Array<number>(SPEED_BOUNDS.length + 1).fill(0);
    slow[SPEED_BOUNDS.length] = 3;
    expect(quantileMs(slow, 0.9)).toBe(300_000);
  });

  it("takes the first-token time where the log gives one: new-api's frt, one-hub's first_response", () => {
    expect(firstTokenMs({ frt: 612.5 })).toBe(612.5);
    expect(firstTokenMs({ frt: -1000 })).toBeNull();
    expect(firstTokenMs({ first_response: 840 })).toBe(840);
    expect(firstTokenMs({})).toBeNull();
  });
});
