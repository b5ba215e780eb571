import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { exitReason } from "../src/server/core/heap";

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

/** How often a build that is still going says so. */
const BUILD_TICK_MS = 20_000;

/**
 * Runs `npm run build` when there is no production build yet (a fresh clone: one to two minutes),
 * saying so before, every 20 s while it runs (its own output may sit still that long), and how
 * long it took; a failed build ends this process with its code.
 */
export async function buildIfNeeded(root = process.cwd(), tickMs = BUILD_TICK_MS): Promise<void> {
  if (existsSync(path.join(root, ".next/BUILD_ID")) && existsSync(path.join(root, SERVER_BUNDLE))) return;
  console.log("首次启动：未找到生产构建，正在构建（npm run build，通常需要 1–2 分钟，只需一次）…");
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  const tick = setInterval(() => console.log(`仍在构建，已用 ${seconds()} 秒…`), tickMs);
  const code = await new Promise<number>((resolve) => {
    const build = spawn("npm", ["run", "build"], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
    });
    build.on("exit", (status, signal) => resolve(status ?? (signal ? 1 : 0)));
    build.on("error", () => resolve(1));
  });
  clearInterval(tick);
  if (code !== 0) {
    console.error(`构建失败（用时 ${seconds()} 秒），见上面的输出`);
    process.exit(code);
  }
  console.log(`构建完成，用时 ${seconds()} 秒；正在启动服务…`);
}

/** A server that dies this soon after it started is not restarted (a bad setting, a refused store). */
const START_GRACE_MS = 15_000;

/**
 * Serves the production build in a child process. A signal to this process (a supervisor's
 * SIGTERM, Ctrl-C to the process group) is passed on once: the server drains and exits, and this
 * process with it. A server that dies by itself after it served (out of memory, a crash) is
 * started again; one that fails at start ends this process with its code. The server watches
 * this process through an IPC channel and drains when it goes away, however it went.
 */
export function serveProduction(
  onExit: () => void = () => undefined,
  quiet?: { logFile: string; onListening: () => void },
): void {
  let stopping: NodeJS.Signals | null = null;
  let server: ChildProcess;
  const start = () => {
    const started = Date.now();
    server = spawn(process.execPath, serverArgs(), {
      stdio: quiet ? ["inherit", "pipe", "pipe", "ipc"] : ["inherit", "inherit", "inherit", "ipc"],
      env: { ...process.env, NODE_ENV: "production", NEXT_TELEMETRY_DISABLED: "1" },
    });
    if (quiet) logQuietly(server, quiet.logFile, quiet.onListening);
    server.on("exit", (code, signal) => {
      if (!stopping && Date.now() - started > START_GRACE_MS) {
        console.error(
          JSON.stringify({
            time: new Date().toISOString(),
            event: "server.restarted",
            pid: server.pid,
            code,
            signal,
            reason: exitReason(code, signal),
          }),
        );
        start();
        return;
      }
      onExit();
      process.exit(code ?? (signal ? 1 : 0));
    });
  };
  start();
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = signal;
    server.kill(signal === "SIGHUP" ? "SIGTERM" : signal);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => stop(signal));
  // npm passes no SIGTERM on to the script it runs: when it (or anything that started this
  // process) is gone, the server is stopped as if it had been signalled.
  watchAncestors(() => stop("SIGTERM"));
}

/**
 * The server's log lines (JSON: requests, events) go to `file` only; what is not a log line (the
 * "服务已启动" line, a refusal to start) also goes to the terminal. `onListening` is called once,
 * when the server says it listens.
 */
function logQuietly(server: ChildProcess, file: string, onListening: () => void): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const log = createWriteStream(file, { flags: "a" });
  let told = false;
  for (const [stream, terminal] of [
    [server.stdout, process.stdout],
    [server.stderr, process.stderr],
  ] as const) {
    if (!stream) continue;
    createInterface({ input: stream }).on("line", (line) => {
      log.write(`${line}\n`);
      if (line.startsWith("{")) return;
      terminal.write(`${line}\n`);
      if (!told && line.startsWith("服务已启动")) {
        told = true;
        onListening();
      }
    });
  }
}

/** Whether a process runs (a zombie waiting to be reaped does not). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return false;
  }
}

/** The processes that started this one, nearest first, up to init (none where /proc is not there). */
function ancestors(): number[] {
  const chain: number[] = [];
  for (let pid = process.ppid; pid > 1 && chain.length < 16;) {
    chain.push(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      pid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    } catch {
      break;
    }
  }
  return chain;
}

/** Calls `gone` once when a process that started this one is no longer running (looked at every second). */
function watchAncestors(gone: () => void): void {
  const chain = ancestors().filter(running);
  if (chain.length === 0) return;
  const timer = setInterval(() => {
    if (chain.every(running)) return;
    clearInterval(timer);
    gone();
  }, 1000);
  timer.unref();
}
