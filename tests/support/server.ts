import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SERVER_BUNDLE, serverArgs } from "../../scripts/serve";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const LOG_DIR = path.join(ROOT, "artifacts/server-logs");

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
  pid: number;
  /** Everything the server printed so far. */
  output: () => string;
  stop: () => Promise<void>;
  /** Kills it outright (SIGKILL), as a crash or an out-of-memory kill does. */
  kill: () => Promise<void>;
};

/**
 * Runs the production server (the bundle of scripts/server.ts) on a free loopback port with the given environment.
 * The store must already be migrated. The server is killed when the test process exits.
 */
export async function startApp(env: Record<string, string>): Promise<RunningApp> {
  if (!existsSync(path.join(ROOT, ".next/BUILD_ID")) || !existsSync(path.join(ROOT, SERVER_BUNDLE))) {
    throw new Error("No production build: run `npm run build` first (npm test does).");
  }
  const port = await freePort();
  // Every server's output goes straight to a file of its own, also kept for the log scan that ends
  // `npm test` (scripts/scan-logs.ts). A pipe to this process would make the server wait on its
  // own log lines (writes to a pipe are synchronous on Linux) whenever this process is busy, as
  // under a load it drives itself.
  mkdirSync(LOG_DIR, { recursive: true });
  const logPath = path.join(LOG_DIR, `server-${port}-${Date.now()}.log`);
  const log = openSync(logPath, "a");
  const child: ChildProcess = spawn(
    process.execPath,
    // The server exactly as `npm start` runs it (one process: pid, signals and RSS are the server's).
    [...(process.env.SERVER_NODE_OPTIONS ?? "").split(" ").filter(Boolean), ...serverArgs()],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: "production",
        NEXT_TELEMETRY_DISABLED: "1",
        HOST: "127.0.0.1",
        PORT: String(port),
        LOG_LEVEL: "info",
        ...env,
      },
      stdio: ["ignore", log, log],
    },
  );
  closeSync(log);
  const output = () => readFileSync(logPath, "utf8");
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${output()}`);
    try {
      const res = await fetch(`${url}/api/auth/me`);
      await res.arrayBuffer();
      break;
    } catch {
      if (Date.now() > deadline) {
        kill();
        throw new Error(`server did not start:\n${output()}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  let exited = false;
  const ended = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));
  const signal = (name: NodeJS.Signals) => {
    process.removeListener("exit", kill);
    if (!exited) child.kill(name);
    return ended;
  };
  return {
    url,
    pid: child.pid ?? 0,
    output,
    stop: () => signal("SIGTERM"),
    kill: () => signal("SIGKILL"),
  };
}
