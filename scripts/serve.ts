import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const nextBin = path.resolve("node_modules/next/dist/bin/next");

/** Runs `next build` when there is no production build yet. */
export function buildIfNeeded(): void {
  if (existsSync(path.resolve(".next/BUILD_ID"))) return;
  console.log("未找到生产构建，正在执行 next build …");
  const build = spawnSync(process.execPath, [nextBin, "build"], {
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

/**
 * Serves the production build on HOST (default 127.0.0.1) and PORT (default 3000); exits with it.
 * `onExit` runs first, e.g. to stop a demo gateway.
 */
export function serve(onExit: () => void = () => undefined): void {
  const host = process.env.HOST || "127.0.0.1";
  const port = process.env.PORT || "3000";
  const server = spawn(process.execPath, [nextBin, "start", "-H", host, "-p", port], {
    stdio: "inherit",
    env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" },
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => server.kill(signal));
  }
  server.on("exit", (code, signal) => {
    onExit();
    process.exit(code ?? (signal ? 1 : 0));
  });
}
