import { connect, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type RunningApp } from "../support/server";
import { tempStore, type TempDb } from "../support/db";
import { workspaceOverHttp } from "../support/http";

/**
 * Bodies the server refuses without reading them, over real connections (a client that stops
 * sending at the early answer, as clients do): the answer says `Connection: close` and the server
 * closes the connection; a file is read only for a signed-in workspace; and only a few files are
 * read at once (503 with Retry-After past them).
 */
let store: TempDb;
let app: RunningApp;
beforeAll(async () => {
  store = await tempStore();
  app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir, LOGIN_RATE_LIMIT: "0" });
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await store?.cleanup();
});

type Raw = { status: number; head: string; closed: Promise<boolean>; socket: Socket };

/**
 * Sends a request's head (and `sent` bytes of its body, nothing more), and waits for the answer's
 * head; `closed` says whether the server closed the connection within `closeMs`.
 */
function rawRequest(path: string, headers: Record<string, string>, sent = "", closeMs = 3000): Promise<Raw> {
  const { port, hostname } = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = "";
    let ended: (v: boolean) => void = () => undefined;
    const closed = new Promise<boolean>((r) => (ended = r));
    socket.on("close", () => ended(true));
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      const had = text.includes("\r\n\r\n");
      text += chunk.toString("latin1");
      if (!had && text.includes("\r\n\r\n")) {
        const head = text.slice(0, text.indexOf("\r\n\r\n"));
        setTimeout(() => ended(false), closeMs).unref();
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), head, closed, socket });
      }
    });
    socket.setTimeout(15_000, () => reject(new Error(`no answer to ${path}`)));
    const lines = Object.entries({ host: `${hostname}:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}`);
    socket.write(`POST ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n${sent}`);
  });
}

const json = { "content-type": "application/json" };

describe("a refused body the server did not read", () => {
  it("is answered with Connection: close, and the connection is closed (sign-in, tRPC, import)", async () => {
    const token = await workspaceOverHttp(app.url, "未读的请求体");
    const cases: Array<[string, Record<string, string>, number]> = [
      ["/api/auth/login", { ...json, "content-length": "5000000" }, 413],
      ["/api/trpc/auth.login", { ...json, "content-length": "5000000" }, 413],
      ["/api/workspace/import", { ...json, "content-length": "5000000", authorization: `Bearer ${token}` }, 413],
      // A file without a credential is refused before it is read.
      ["/api/workspace/import", { ...json, "content-length": "4000000" }, 401],
      ["/api/workspace/restore", { ...json, "content-length": "4000000" }, 401],
      ["/api/trpc/workspace.importAccounts", { ...json, "content-length": "4000000" }, 401],
    ];
    for (const [path, headers, status] of cases) {
      const answer = await rawRequest(path, headers, '{"a":');
      expect([path, answer.status]).toEqual([path, status]);
      expect(answer.head.toLowerCase()).toContain("connection: close");
      expect(await answer.closed).toBe(true);
      answer.socket.destroy();
    }
  });

  it("keeps an ordinary connection alive", async () => {
    const body = JSON.stringify({});
    const answer = await rawRequest("/api/auth/login", { ...json, "content-length": String(body.length) }, body, 500);
    expect(answer.status).toBe(200);
    expect(answer.head.toLowerCase()).toContain("connection: keep-alive");
    expect(await answer.closed).toBe(false);
    answer.socket.destroy();
  });

  it("reads four files at once, and answers the others 503 with Retry-After until one ends", async () => {
    const token = await workspaceOverHttp(app.url, "同时上传");
    const headers = { ...json, "content-length": "3000000", authorization: `Bearer ${token}` };
    // Four uploads that send a little and then wait: each holds one of the reads.
    const { port, hostname } = new URL(app.url);
    const slow = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const socket = connect(Number(port), hostname);
        socket.on("error", () => undefined);
        await new Promise((r) => socket.once("connect", r));
        const lines = Object.entries({ host: `${hostname}:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}`);
        socket.write(`POST /api/workspace/import HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n{"version":`);
        return socket;
      }),
    );
    // Until the server has begun reading all four.
    let busy: Raw | null = null;
    for (let i = 0; i < 50 && busy?.status !== 503; i++) {
      busy?.socket.destroy();
      busy = await rawRequest("/api/workspace/import", headers, "{");
      if (busy.status !== 503) await new Promise((r) => setTimeout(r, 100));
    }
    expect(busy?.status).toBe(503);
    expect(busy?.head).toMatch(/retry-after: 5/i);
    busy?.socket.destroy();
    for (const s of slow) s.destroy();
    // The reads end with their connections: a file is read again.
    let again: Raw | null = null;
    for (let i = 0; i < 50; i++) {
      again?.socket.destroy();
      again = await rawRequest("/api/workspace/import", { ...headers, "content-length": "2" }, "{}");
      if (again.status !== 503) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(again?.status).toBe(200);
    again?.socket.destroy();
  });
});
