import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempSqlite } from "../support/db";
import { startApp } from "../support/server";

const ROOT = path.resolve(__dirname, "../..");

/**
 * A process whose live set grows says so before V8's heap limit ends it (core/heap.ts): a real
 * Node process with a 64 MB heap keeps what it allocates, and its readiness turns before it runs
 * out, with one `heap.high` line in its log.
 */
const GROW = `
import { heapState, watchHeap } from "./src/server/core/heap.ts";
watchHeap();
const kept = [];
const step = () => {
  kept.push(new Array(64 * 1024).fill(kept.length));
  const heap = heapState();
  if (heap.problem) {
    console.log("NOT_READY " + JSON.stringify(heap));
    process.exit(0);
  }
  setTimeout(step, 2);
};
step();
`;

function grow(): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--max-old-space-size=64", "--import", "tsx", "--input-type=module", "-e", GROW],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "info" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("exit", (code, signal) => resolve({ code, signal, out }));
  });
}

describe("the heap filling up", () => {
  it("turns readiness and is logged before the limit is reached", async () => {
    const { code, signal, out } = await grow();
    expect(out).not.toContain("heap out of memory");
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const line = out.split("\n").find((l) => l.startsWith("NOT_READY ")) ?? "";
    const state = JSON.parse(line.slice("NOT_READY ".length)) as { liveShare: number; problem: string };
    expect(state.liveShare).toBeGreaterThan(0.75);
    expect(state.problem).toMatch(/^内存将满（已用堆内存 \d+%，上次完整回收后仍占 \d+%）$/);
    const events = out.split("\n").filter((l) => l.includes('"event":"heap.high"'));
    expect(events).toHaveLength(1);
  }, 60_000);

  it("is what a production server's readiness reports: the watch its entry started, read by its routes", async () => {
    const store = tempSqlite();
    const app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir });
    try {
      // Starting the app collects its heap in full more than once; the share left is the live set.
      const res = await fetch(`${app.url}/api/ready`);
      const { checks } = (await res.json()) as { checks: { heapLiveShare: number; heapUsedShare: number } };
      expect(checks.heapLiveShare).toBeGreaterThan(0);
      expect(checks.heapLiveShare).toBeLessThan(0.75);
    } finally {
      await app.stop();
      await store.cleanup();
    }
  }, 60_000);
});
