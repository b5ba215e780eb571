import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

/** scripts/server.ts bundled by `npm run build`: production runs plain Node, no TS loader. */
export const SERVER_BUNDLE = ".next/gd-server.mjs";

/**
 * V8 grows its heap lazily up to a limit sized for the machine; a cap keeps a busy server near
 * its working set (about 180 MB RSS measured in docs/benchmarks.md) instead of hundreds of MB.
 * The young generation is capped too: a long download (a CSV export streams a million rows of
 * short-lived strings) otherwise grows it to its 16 MB semi-spaces, some 50 MB of RSS.
 */
export function serverArgs(): string[] {
  const heapMb = Number(process.env.MAX_HEAP_MB || 256);
  return [`--max-old-space-size=${heapMb}`, "--max-semi-space-size=4", SERVER_BUNDLE];
}

/** Runs `npm run build` when there is no production build yet. */
export function buildIfNeeded(root = process.cwd()): void {
  if (existsSync(path.join(root, ".next/BUILD_ID")) && existsSync(path.join(root, SERVER_BUNDLE))) return;
  console.log("未找到生产构建，正在执行 npm run build …");
  const build = spawnSync("npm", ["run", "build"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

/** Serves the production build in a child process; this process exits with it. */
export function serveProduction(onExit: () => void = () => undefined): void {
  const server = spawn(process.execPath, serverArgs(), {
    stdio: "inherit",
    env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" },
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
  server.on("exit", (code, signal) => {
    onExit();
    process.exit(code ?? (signal ? 1 : 0));
  });
}
