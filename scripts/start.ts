/**
 * `npm start`: prepare the store, build once if there is no production build, then serve.
 * HOST (default 127.0.0.1) and PORT (default 3000) choose where it listens.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { prepareOrExit } from "./prepare";

const nextBin = path.resolve("node_modules/next/dist/bin/next");

prepareOrExit();

if (!existsSync(path.resolve(".next/BUILD_ID"))) {
  console.log("未找到生产构建，正在执行 next build …");
  const build = spawnSync(process.execPath, [nextBin, "build"], { stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const host = process.env.HOST || "127.0.0.1";
const port = process.env.PORT || "3000";
const server = spawn(process.execPath, [nextBin, "start", "-H", host, "-p", port], {
  stdio: "inherit",
  env: { ...process.env, NODE_ENV: "production" },
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => server.kill(signal));
}
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
