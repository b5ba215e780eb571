/**
 * Floods of oversized bodies beside `/api/health`: 50 at once to each body-taking route of the
 * OpenAPI document (64 KiB + 1 byte each, sent whole; the routes that take files get 4 MiB + 1
 * byte from a signed-in workspace, and 4 MiB from nobody), while a process of its own asks
 * `/api/health` every 50 ms. Idle is read first, in the same run.
 */
import { spawn } from "node:child_process";
import http from "node:http";
import { tempSqlite } from "../tests/support/db";
import { workspaceOverHttp } from "../tests/support/http";
import { startApp } from "../tests/support/server";
import { median } from "./common";

export type FloodFigures = {
  routes: number;
  large: number;
  requests: number;
  answers: Record<string, number>;
  idle: { p50: number; max: number };
  flooded: { p50: number; max: number; samples: number };
};

const SMALL = 64 * 1024 + 1;
const LARGE = 4 * 1024 * 1024 + 1;
const AT_ONCE = 50;
/** The routes that read files (design 29: only a signed-in workspace's file is read, a few at once). */
const FILE_ROUTES = ["/api/workspace/import", "/api/workspace/restore", "/api/trpc/workspace.importAccounts"];

/**
 * Health's latencies, in ms, taken by a process of its own (the flood's sender shares no thread
 * with it) until `stop`; a request that failed counts as 30 s.
 */
function probeHealth(base: string): { stop: () => Promise<number[]> } {
  const script = `
    let going = true; const out = [];
    process.stdin.on("data", () => (going = false)).resume();
    (async () => { while (going) { const t = performance.now();
      try { const r = await fetch(${JSON.stringify(`${base}/api/health`)}); await r.arrayBuffer(); out.push(performance.now() - t); }
      catch { out.push(null); }
      await new Promise((r) => setTimeout(r, 50)); }
      process.stdout.write(JSON.stringify(out)); process.exit(0); })();`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  let text = "";
  child.stdout.on("data", (c: Buffer) => (text += c.toString()));
  const ended = new Promise<number[]>((resolve, reject) =>
    child.once("exit", () => {
      try {
        resolve((JSON.parse(text) as Array<number | null>).map((x) => x ?? 30_000));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }),
  );
  return { stop: () => (child.stdin.end("stop"), ended) };
}

/** One request with a body of `size` bytes sent whole (or until the server closes): its status, 0 if none. */
function send(
  base: string,
  method: string,
  path: string,
  size: number,
  body: Buffer,
  headers: Record<string, string>,
): Promise<number> {
  const url = new URL(path, base);
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method,
        agent: false,
        headers: { "content-type": "application/json", "content-length": String(size), ...headers },
      },
      (res) => {
        res.resume();
        res.once("end", () => resolve(res.statusCode ?? 0));
        res.once("error", () => resolve(res.statusCode ?? 0));
      },
    );
    req.setTimeout(60_000, () => req.destroy());
    req.once("error", () => resolve(0));
    req.end(body.subarray(0, size));
  });
}

export async function benchFloods(): Promise<FloodFigures> {
  const store = tempSqlite();
  const app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir, LOGIN_RATE_LIMIT: "0" });
  try {
    const token = await workspaceOverHttp(app.url, "洪水");
    const doc = (await (await fetch(`${app.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const small = Object.entries(doc.paths).flatMap(([p, ops]) =>
      (["post", "put", "patch"] as const)
        .filter((m) => m in ops)
        .map((m) => ({ method: m.toUpperCase(), path: p.replace(/\{[^}]+\}/g, "1") }))
        // Not the sign-outs: the flood's own credential would end with the first of them.
        .filter((r) => !FILE_ROUTES.includes(r.path) && !r.path.endsWith("/logout")),
    );
    const body = Buffer.alloc(LARGE, 0x20);
    const idleProbe = probeHealth(app.url);
    await new Promise((r) => setTimeout(r, 5_000));
    const idle = await idleProbe.stop();
    const answers: Record<string, number> = {};
    const bearer = { authorization: `Bearer ${token}` };
    const floods = [
      ...small.map((r) => ({ ...r, size: SMALL, headers: bearer })),
      ...FILE_ROUTES.map((p) => ({ method: "POST", path: p, size: LARGE, headers: bearer })),
      ...FILE_ROUTES.map((p) => ({ method: "POST", path: p, size: LARGE - 1, headers: {} })),
    ];
    const probe = probeHealth(app.url);
    await new Promise((r) => setTimeout(r, 1_000));
    // Route after route, 50 at once to each.
    let requests = 0;
    for (const f of floods) {
      const statuses = await Promise.all(
        Array.from({ length: AT_ONCE }, () => send(app.url, f.method, f.path, f.size, body, f.headers)),
      );
      requests += statuses.length;
      for (const s of statuses) answers[String(s)] = (answers[String(s)] ?? 0) + 1;
    }
    const flooded = await probe.stop();
    return {
      routes: small.length,
      large: FILE_ROUTES.length,
      requests,
      answers,
      idle: { p50: median(idle), max: Math.max(...idle) },
      flooded: { p50: median(flooded), max: Math.max(...flooded), samples: flooded.length },
    };
  } finally {
    await app.stop();
    await store.cleanup();
  }
}

export function floodLines(f: FloodFigures): string[] {
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const answers = Object.entries(f.answers)
    .map(([s, n]) => `${n} × ${s === "0" ? "no answer" : s}`)
    .join(", ");
  return [
    "",
    `Floods of oversized bodies: ${AT_ONCE} at once to each of ${f.routes} body-taking routes (64 KiB + 1) and ` +
      `${f.large} file routes (4 MiB + 1 signed in, 4 MiB without a credential); \`/api/health\` every 50 ms from a process of its own`,
    "",
    "| figure | goal | result |",
    "|---|---|---|",
    `| slowest \`/api/health\` during the flood | < 1 s | ${f.flooded.max < 1000 ? "✅" : "❌"} ${ms(f.flooded.max)} (${f.flooded.samples} answers) |`,
    `| median \`/api/health\` during the flood ÷ idle | report | ${(f.flooded.p50 / f.idle.p50).toFixed(2)} (${ms(f.flooded.p50)} / ${ms(f.idle.p50)}; idle slowest ${ms(f.idle.max)}) |`,
    `| answers to the ${f.requests} requests | all refused | ${answers} |`,
  ];
}
