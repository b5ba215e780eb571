/**
 * The production HTTP server: Next.js behind a thin Node `http` layer that pins the client
 * address. Next keeps any `X-Forwarded-*` header a client sends; this layer keeps them only from
 * the proxies TRUST_PROXY names, resolves the one client address (the log line and the rate
 * limits both use it) and hands it on as X-Forwarded-For. HOST (default 127.0.0.1) and PORT
 * (default 3000) choose where it listens. `npm run build` bundles this file into
 * .next/gd-server.mjs, which `npm start` runs.
 */
import { existsSync } from "node:fs";
import { createServer, type IncomingMessage } from "node:http";
import type { BlockList } from "node:net";
import next from "next";
import { env } from "../src/server/core/env";
import { logRequest } from "../src/server/core/log";
import { metrics, routeOf } from "../src/server/core/metrics";
import { requestIdOf, withRequest } from "../src/server/core/request-context";
import { processState } from "../src/server/core/process-state";
import { db, isPostgresUrl, sqlitePath } from "../src/server/db/client";
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
  const app = next({ dev: false, hostname, port, dir: process.cwd() });
  const handle = app.getRequestHandler();
  await app.prepare();
  const server = createServer((req, res) => {
    const started = performance.now();
    const client = pinClientAddress(req, proxies);
    // One id per request: in its log lines (site calls included) and its answer's X-Request-Id.
    const id = requestIdOf(req.headers["x-request-id"]);
    req.headers["x-request-id"] = id;
    res.setHeader("X-Request-Id", id);
    res.once("finish", () => {
      const ms = performance.now() - started;
      const route = routeOf(req.url ?? "");
      const m = metrics();
      m.httpRequests.inc({ route, method: req.method ?? "", status: String(res.statusCode) });
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
    withRequest(id, () => void handle(req, res));
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, resolve);
  });
  console.log(`服务已启动: http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`);
  const stop = () => {
    setTimeout(() => process.exit(0), 5_000).unref();
    server.close();
    server.closeAllConnections();
    // No job starts from now on (the ledger syncs, the renewals); those under way end at their
    // next safe point (a sync after the slice it reads) and are waited for a moment; the leases
    // still held then are let go of, so another instance takes over at once.
    void (async () => {
      await stopJobs(3_000);
      await Promise.all([releaseHeldLedgerLeases(db()), releaseHeldJobLeases(db())]).catch(() => undefined);
      processState().dispose();
      process.exit(0);
    })();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  Object.assign(process.env, { NODE_ENV: "production" });
  startServer().catch((error: unknown) => {
    console.error(error instanceof StoreRefused ? error.message : `启动失败: ${(error as Error).message}`);
    process.exit(1);
  });
}
