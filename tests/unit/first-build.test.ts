import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildIfNeeded } from "../../scripts/serve";

/**
 * `npm start` on a fresh clone builds first: it says so, says it is still building while the
 * build's own output sits still, and says when it is done and how long it took.
 */

const dirs: string[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A checkout whose `npm run build` takes `ms` and then leaves a production build (or fails). */
function checkout(ms: number, fails = false): string {
  const dir = mkdtempSync(path.join(tmpdir(), "gd-first-build-"));
  dirs.push(dir);
  const build = fails
    ? `setTimeout(() => process.exit(3), ${ms})`
    : `setTimeout(() => { const fs = require("fs"); fs.mkdirSync(".next", { recursive: true }); ` +
      `fs.writeFileSync(".next/BUILD_ID", "x"); fs.writeFileSync(".next/gd-server.mjs", ""); }, ${ms})`;
  writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: "first-build", private: true, scripts: { build: `node -e '${build}'` } }),
  );
  return dir;
}

describe("the first build", () => {
  it("says it builds, that it is still building, and when it is done", async () => {
    const said: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void said.push(line));
    await buildIfNeeded(checkout(1_200), 300);
    expect(said[0]).toMatch(/^首次启动：未找到生产构建，正在构建（npm run build，通常需要 1–2 分钟，只需一次）…$/);
    expect(said.filter((l) => /^仍在构建，已用 \d+ 秒…$/.test(l)).length).toBeGreaterThanOrEqual(2);
    expect(said.at(-1)).toMatch(/^构建完成，用时 \d+ 秒；正在启动服务…$/);
  });

  it("builds nothing when the build is there", async () => {
    const said: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void said.push(line));
    const dir = checkout(0);
    await buildIfNeeded(dir, 300);
    said.length = 0;
    await buildIfNeeded(dir, 300);
    expect(said).toEqual([]);
  });

  it("ends with the build's code when it fails, saying so", async () => {
    vi.spyOn(console, "log").mockImplementation(() => undefined);
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: string) => void errors.push(line));
    const exit = vi.spyOn(process, "exit").mockImplementation((() => undefined) as never);
    await buildIfNeeded(checkout(50, true), 300);
    expect(exit).toHaveBeenCalledWith(3);
    expect(errors).toEqual([expect.stringMatching(/^构建失败（用时 \d+ 秒），见上面的输出$/)]);
  });
});
