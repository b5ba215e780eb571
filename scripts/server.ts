/**
 * The production HTTP server: Next.js behind a thin Node `http` layer that pins the client
 * address. Next keeps any `X-Forwarded-*` header a client sends; unless TRUST_PROXY is set, this
 * layer replaces them with what the socket says, so rate limits cannot be dodged by a header.
 * HOST (default 127.0.0.1) and PORT (default 3000) choose where it listens. `npm run build`
 * bundles this file into .next/gd-server.mjs, which `npm start` runs.
 */
import { createServer, type IncomingMessage } from "node:http";
import next from "next";
import { env } from "../src/server/env";
import { clientAddressFrom } from "../src/server/http/client-address";
import { logRequest } from "../src/server/log";

const FORWARDED = ["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port", "x-real-ip"];

export function pinClientAddress(req: IncomingMessage, trustProxy: boolean): void {
  if (trustProxy) return;
  for (const name of FORWARDED) delete req.headers[name];
  req.headers["x-forwarded-for"] = req.socket.remoteAddress ?? "";
}

export async function startServer(): Promise<void> {
  const hostname = process.env.HOST || "127.0.0.1";
  const port = Number(process.env.PORT || 3000);
  const trustProxy = env().TRUST_PROXY;
  const app = next({ dev: false, hostname, port, dir: process.cwd() });
  const handle = app.getRequestHandler();
  await app.prepare();
  const server = createServer((req, res) => {
    const started = performance.now();
    pinClientAddress(req, trustProxy);
    const forwarded = req.headers["x-forwarded-for"];
    const client = clientAddressFrom(Array.isArray(forwarded) ? forwarded.join(",") : forwarded);
    res.once("finish", () => {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      logRequest({ method: req.method ?? "", path: req.url ?? "", status: res.statusCode, ms, client });
    });
    void handle(req, res);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, resolve);
  });
  console.log(`服务已启动: http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`);
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 5_000).unref();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  Object.assign(process.env, { NODE_ENV: "production" });
  startServer().catch((error: unknown) => {
    console.error(`启动失败: ${(error as Error).message}`);
    process.exit(1);
  });
}
