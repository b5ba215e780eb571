import { describe, expect, it } from "vitest";
import { appRouter } from "../../src/server/api/root";

/** Every procedure declares what it answers (validated on the way out) and, when it takes anything, a schema for it. */
const procedures = (appRouter._def as unknown as { procedures: Record<string, { _def: { output?: unknown } }> })
  .procedures;

describe("the procedures", () => {
  it("each declare their answer with .output()", () => {
    const names = Object.keys(procedures);
    expect(names.length).toBeGreaterThan(30);
    expect(names.filter((name) => !procedures[name]?._def.output)).toEqual([]);
  });
});
