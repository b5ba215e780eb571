import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const nextBin = path.resolve("node_modules/next/dist/bin/next");

/** Runs `next build` when there is no production build yet. */
export function buildIfNeeded(): void {
  if (existsSync(path.resolve(".next/BUILD_ID"))) return;
  console.log("未找到生产构建，正在执行 next build …");
  const build = spawnSync(process.execPath, [nextBin, "build"], {
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

/** Serves the production build in this process (scripts/server.ts). */
export async function serveProduction(): Promise<void> {
  Object.assign(process.env, { NODE_ENV: "production" });
  const { startServer } = await import("./server");
  await startServer();
}
