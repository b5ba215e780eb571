import { afterEach, describe, expect, it } from "vitest";
import type { SharedBudget } from "../../src/server/core/shared-budget";
import { freshProcessState } from "../../src/server/core/process-state";
import { fallbackShare, installSharedBudget, sharedBudgetState } from "../../src/server/gateway/shared-gate";

/**
 * The instances a fallback share divides by (docs/design.md 23): a store that came back empty
 * counts only the instances that beat since, so this instance keeps the most any beat of the last
 * minute counted, and its share stays its share, never the whole budget.
 */
const store = (counted: number, reconnected = false): SharedBudget => ({
  kind: "redis",
  take: () => Promise.resolve({ kind: "taken", used: 1 }),
  done: () => Promise.resolve(),
  restore: () => Promise.resolve(),
  pause: () => Promise.resolve(),
  reconnected: () => reconnected,
  beat: () => Promise.resolve(counted),
  close: () => Promise.resolve(),
});
const hooks = { fallback: () => undefined, shared: () => undefined };

afterEach(() => freshProcessState());

describe("the fallback share", () => {
  it("divides by the instances seen in the last minute, not by what a store back empty counts", async () => {
    freshProcessState();
    await installSharedBudget(store(2), hooks);
    expect(sharedBudgetState()).toMatchObject({ instances: 2, fallback: false });
    // Redis restarted empty: this instance's first beat is the only one it knows of.
    await installSharedBudget(store(1, true), hooks);
    expect(sharedBudgetState()).toMatchObject({ instances: 2, fallback: true });
    expect(fallbackShare(20)).toBe(10);
  });
});
