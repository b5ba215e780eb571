/**
 * The production HTTP server: Next.js behind a thin Node `http` layer that pins the client
 * address. Next keeps any `X-Forwarded-*` header a client sends; this layer keeps them only from
 * the proxies TRUST_PROXY names, resolves the one client address (the log line and the rate
 * limits both use it) and hands it on as X-Forwarded-For. HOST (default 127.0.0.1) and PORT
 * (default 3000) choose where it listens. `npm run build` bundles this file into
 * .next/gd-server.mjs, which `npm start` runs.
 */
import cluster from "node:cluster";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { availableParallelism } from "node:os";
import { Server as NetServer, type BlockList } from "node:net";
import next from "next";
import { EnvError, env } from "../src/server/core/env";
import { exitReason, watchHeap } from "../src/server/core/heap";
import { isProbe, liveRequest } from "../src/server/core/live-load";
import { logEvent, logRequest } from "../src/server/core/log";
import { methodOf, metrics, routeOf, setRoutePatterns } from "../src/server/core/metrics";
import { requestIdOf, withRequest } from "../src/server/core/request-context";
import { processState } from "../src/server/core/process-state";
import { restEndpoints } from "../src/server/http/dispatch";
import { davHandler, isDavPath } from "../src/server/http/dav";
import { closeDbs, db, isPostgresUrl, sqlitePath } from "../src/server/db/client";
import { StoreRefused, checkSqliteHome, lockSqlite, watchSqlite } from "../src/server/db/sqlite-guard";
import { releaseHeldJobLeases } from "../src/server/jobs/leases";
import { stopJobs } from "../src/server/jobs/registry";
import { releaseHeldLedgerLeases } from "../src/server/ledger/sync";
import { resolveClientAddress, trustedProxies } from "../src/server/net/client-address";

const FORWARDED = ["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port", "x-real-ip"];

/** Replaces the forwarding headers with what this server knows; returns the client address. */
export function pinClientAddress(req: IncomingMessage, proxies: BlockList): string | null {
  const forwarded = req.headers["x-forwarded-for"];
  const { address, viaProxy } = resolveClientAddress(
    req.socket.remoteAddress,
    Array.isArray(forwarded) ? forwarded.join(",") : forwarded,
    proxies,
  );
  if (!viaProxy) for (const name of FORWARDED) delete req.headers[name];
  req.headers["x-forwarded-for"] = address ?? "";
  return address;
}

/**
 * A response that starts before its request's body came whole (a refusal of a body it did not
 * read: 413, 401, 503) says `Connection: close` and closes the connection after it: a client
 * stops sending at the early answer, and a kept-alive connection would wait on the rest for ever.
 */
function endsUnreadBodies(req: IncomingMessage, res: ServerResponse): void {
  const length = req.headers["content-length"];
  const hasBody = (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined;
  if (!hasBody) return;
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = (...args: unknown[]) => {
    if (!req.complete) res.shouldKeepAlive = false;
    return writeHead(...args);
  };
}

/** The REST endpoints' paths as route patterns (`/api/workspace/accounts/[id]`, `/api/site/[...path]`). */
function restRoutePatterns(): string[] {
  return restEndpoints().map((e) => e.route.path.replace(/\{(\w+)\.\.\.\}/g, "[...$1]").replace(/\{(\w+)\}/g, "[$1]"));
}

/** The app's page and route patterns from the build's manifest (`/api/workspace/accounts/[id]`). */
export function appRoutes(dir: string): string[] {
  const file = path.join(dir, ".next", "app-path-routes-manifest.json");
  const manifest = JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
  return Object.values(manifest);
}

export async function startServer(): Promise<void> {
  const hostname = process.env.HOST || "127.0.0.1";
  const port = Number(process.env.PORT || 3000);
  const proxies = trustedProxies(env().TRUST_PROXY);
  // Files this process creates (the SQLite WAL files, the generated password) are its own only.
  process.umask(0o077);
  // SQLite is one process's: refuse a second, and a database gone missing; watch the file.
  const { DATABASE_URL, DATA_DIR } = env();
  if (!isPostgresUrl(DATABASE_URL)) {
    const file = sqlitePath(DATABASE_URL);
    checkSqliteHome(file, DATA_DIR);
    if (!existsSync(file)) throw new StoreRefused(`数据库文件 ${file} 不存在：请先运行 npm start（它会建好数据库）`);
    lockSqlite(file);
    watchSqlite(file);
  }
  // A heap filling up is said (log, readiness) before it is out of room.
  watchHeap();
  // The metrics' route labels are the app's own routes, as the build lists them (a fixed set).
  setRoutePatterns([...appRoutes(process.cwd()), ...restRoutePatterns()]);
  const app = next({ dev: false, hostname, port, dir: process.cwd() });
  const handle = app.getRequestHandler();
  await app.prepare();
  let draining = false;
  let inFlight = 0;
  const server = createServer((req, res) => {
    const started = performance.now();
    // While stopping, each answer ends its connection: the client's next request goes elsewhere.
    if (draining) res.setHeader("Connection", "close");
    inFlight++;
    // A person waiting comes before background work; a probe does not (core/live-load.ts).
    const answered = isProbe(req.url ?? "") ? () => undefined : liveRequest();
    res.once("close", () => {
      inFlight--;
      answered();
    });
    endsUnreadBodies(req, res);
    const client = pinClientAddress(req, proxies);
    // One id per request: in its log lines (site calls included) and its answer's X-Request-Id.
    const id = requestIdOf(req.headers["x-request-id"]);
    req.headers["x-request-id"] = id;
    res.setHeader("X-Request-Id", id);
    res.once("finish", () => {
      const ms = performance.now() - started;
      const route = routeOf(req.url ?? "");
      const m = metrics();
      m.httpRequests.inc({ route, method: methodOf(req.method), status: String(res.statusCode) });
      m.httpSeconds.observe({ route }, ms / 1000);
      withRequest(id, () =>
        logRequest({
          method: req.method ?? "",
          path: req.url ?? "",
          status: res.statusCode,
          ms: Math.round(ms * 10) / 10,
          client,
        }),
      );
    });
    const pathname = (req.url ?? "/").split("?")[0] as string;
    withRequest(id, () => void (isDavPath(pathname) ? serveDav(req, res) : handle(req, res)));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, resolve);
  });
  const worker = cluster.isWorker ? `（工作进程 ${cluster.worker?.id ?? "?"}，pid ${process.pid}）` : "";
  console.log(`服务已启动: http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}${worker}`);
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      draining = true;
      // Whatever happens below, the process is gone within the grace and a little more.
      setTimeout(() => process.exit(0), DRAIN_MS + 5_000).unref();
      const drained = drain(server, () => inFlight);
      // No job starts from now on (the ledger syncs, the renewals); those under way end at their
      // next safe point (a sync after the slice it reads) and are waited for a moment; the leases
      // still held then are let go of, so another instance takes over at once.
      await stopJobs(3_000);
      await Promise.all([releaseHeldLedgerLeases(db()), releaseHeldJobLeases(db())]).catch(() => undefined);
      const left = await drained;
      logEvent("server.stopped", { unfinishedRequests: left });
      processState().dispose();
      await closeDbs().catch(() => undefined);
      process.exit(0);
    })();
  };
  // One drain, whatever the signals: a second one (Ctrl-C to the process group reaches this
  // process and the one that started it, which passes it on) does not cut the drain short.
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  // Started by `npm start` (scripts/serve.ts): when that process goes away, this one drains too.
  if (process.send) process.on("disconnect", stop);
}

/**
 * The WebDAV folder of the All API Hub sync (src/server/http/dav.ts), served here: Next's route
 * handlers take only the HTTP methods of REST, not PROPFIND, MKCOL or MOVE.
 */
async function serveDav(req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const proto = req.headers["x-forwarded-proto"] === "https" ? "https" : "http";
    const hasBody = req.method === "PUT" || req.method === "PROPFIND";
    const request = new Request(`${proto}://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, {
      method: req.method ?? "GET",
      headers,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
    });
    const response = await davHandler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  } catch (error) {
    logEvent("dav.failed", { error: (error as Error).message });
    if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" });
    res.end("服务内部错误");
  }
}

/** How long a stopping server lets the requests in flight finish. */
const DRAIN_MS = 10_000;
/** A stopping server closes its connections once no request has come on them for this long. */
const QUIET_MS = 1_000;

/**
 * Stops listening, and serves the connections already accepted until they have been quiet for
 * QUIET_MS (at most DRAIN_MS): a request a client had already sent on one (a keep-alive
 * connection it was reusing) is answered, with `Connection: close`, rather than cut off; then
 * ends what is left. Returns the requests cut off. (`server.close()` would close the idle
 * connections at once, resetting a request on its way in on each.)
 */
async function drain(server: Server, inFlight: () => number): Promise<number> {
  NetServer.prototype.close.call(server);
  const deadline = Date.now() + DRAIN_MS;
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    if (inFlight() > 0) quietSince = Date.now();
    else if (Date.now() - quietSince >= QUIET_MS) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const left = inFlight();
  server.closeAllConnections();
  return left;
}

/** WORKERS: how many processes serve the port (`auto`: one per core). */
export function workerCount(value: string | undefined, cores = availableParallelism()): number {
  const raw = (value ?? "").trim();
  if (raw === "" || raw === "1") return 1;
  if (raw === "auto") return Math.max(1, cores);
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 64) {
    throw new EnvError(`环境变量无效:\n  WORKERS: 必须是 1 到 64 之间的整数，或 auto（每个 CPU 核一个）`);
  }
  return Number(raw);
}

/**
 * The primary of WORKERS > 1: forks the workers (each a whole server on the shared port, node:cluster
 * hands each connection to one of them), replaces one that dies, and on SIGTERM passes it on and
 * exits when they all have.
 */
function runPrimary(count: number): void {
  if (!isPostgresUrl(env().DATABASE_URL)) {
    throw new StoreRefused(
      "WORKERS 大于 1 需要 PostgreSQL（DATABASE_URL=postgresql://…）：SQLite 数据库只能由一个进程打开",
    );
  }
  let stopping = false;
  const listening = new Set<number>();
  const workers = () => Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
  for (let i = 0; i < count; i++) cluster.fork();
  cluster.on("listening", (worker) => listening.add(worker.id));
  cluster.on("exit", (worker, code, signal) => {
    if (stopping) {
      if (workers().length === 0) process.exit(0);
      return;
    }
    // One that never got to serve (a bad setting, the store refused) said why: the rest stop too.
    if (!listening.has(worker.id)) {
      for (const w of workers()) w.process.kill("SIGKILL");
      process.exit(code || 1);
    }
    // One that served and died (out of memory, a crash) is replaced.
    logEvent("worker.replaced", { pid: worker.process.pid, code, signal, reason: exitReason(code, signal) });
    cluster.fork();
  });
  const stop = (name: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    for (const worker of workers()) worker.process.kill(name);
    setTimeout(() => process.exit(0), DRAIN_MS + 8_000).unref();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  if (process.send) process.on("disconnect", () => stop("SIGTERM"));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  Object.assign(process.env, { NODE_ENV: "production" });
  const fail = (error: unknown) => {
    const plain = error instanceof StoreRefused || error instanceof EnvError;
    console.error(plain ? error.message : `启动失败: ${(error as Error).message}`);
    process.exit(1);
  };
  try {
    const workers = cluster.isPrimary ? workerCount(process.env.WORKERS) : 1;
    if (workers > 1) runPrimary(workers);
    else startServer().catch(fail);
  } catch (error) {
    fail(error);
  }
}
