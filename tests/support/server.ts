import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export type RunningApp = {
  url: string;
  /** Everything the server printed so far. */
  output: () => string;
  stop: () => Promise<void>;
};

/**
 * Runs the production build (`next start`) on a free loopback port with the given environment.
 * The store must already be migrated. The server is killed when the test process exits.
 */
export async function startApp(env: Record<string, string>): Promise<RunningApp> {
  if (!existsSync(path.join(ROOT, ".next/BUILD_ID"))) {
    throw new Error("No production build: run `npm run build` first (npm test does).");
  }
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [path.join(ROOT, "node_modules/next/dist/bin/next"), "start", "-H", "127.0.0.1", "-p", String(port)],
    {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output}`);
    try {
      const res = await fetch(`${url}/api/auth/me`);
      await res.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) {
        kill();
        throw new Error(`server did not start:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        process.removeListener("exit", kill);
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
