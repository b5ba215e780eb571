import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway } from "../../../src/demo/gateway";
import { siteRegistry } from "../../../src/server/sites/registry";
import { tempPostgres, tempSqlite, type TempDb } from "../../support/db";
import { signInOverHttp } from "../../support/http";
import { startApp, type RunningApp } from "../../support/server";

/**
 * Stopping and many workers (docs/design.md 23): SIGTERM stops accepting and lets the requests in
 * flight finish, so a rolling restart of two instances under load fails no request; WORKERS=2
 * serves one port from two processes, replaces one that dies, and stops both on SIGTERM.
 */

const USER = { accessToken: "sk-rolling-0123456789abcdef", data: newApiUser(501, { username: "rolling" }) };

let store: TempDb;
let site: RunningGateway;
let siteId: number;

beforeAll(async () => {
  store = await tempPostgres();
  // Each site call takes 1.2 s: a live read is a request still in flight when SIGTERM comes.
  site = await startGateway({ users: [USER], latencyMs: 1_200 });
  siteId = (await siteRegistry(store.db).add({ name: "慢站", url: site.url })).id;
}, 60_000);
afterAll(async () => {
  await site?.close();
  await store?.cleanup();
});

const ENV = () => ({ DATABASE_URL: store.url, DATA_DIR: store.dir, LOGIN_RATE_LIMIT: "0" });

type Answer = { status: number; body: string };

/**
 * One GET on a connection of its own (as a reverse proxy without upstream keep-alive sends it).
 * A connection refused rejects with ECONNREFUSED: the request never reached the instance.
 */
function get(base: string, path: string, token: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      { agent: false, headers: { authorization: `Bearer ${token}` }, timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end();
  });
}

/**
 * What a reverse proxy passes to the next instance (nginx's default `proxy_next_upstream error`
 * for a GET): a connection refused, or one closed before any answer began (a connection still in
 * the listen queue when the old instance closed it). A request answered, even with an error, is
 * not tried again; the requests in flight at SIGTERM are checked apart, with no retry.
 */
const notTaken = (error: unknown) =>
  ["ECONNREFUSED", "ECONNRESET"].includes((error as NodeJS.ErrnoException).code ?? "");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SLOW = "/api/account/summary?refresh=1";

describe("a rolling restart of two instances", () => {
  it("fails no request under load: each instance finishes what it took, and the next takes the rest", async () => {
    const apps: RunningApp[] = await Promise.all([startApp(ENV()), startApp(ENV())]);
    const { token } = await signInOverHttp(apps[0]!.url, { userId: 501, accessToken: USER.accessToken, siteId });
    const failures: string[] = [];
    let answered = 0;
    let turn = 0;
    /** The proxy's part: the next instance in turn; one that did not take the request, the one after. */
    const send = async (path: string) => {
      for (let tries = 0; tries < 20; tries++) {
        const app = apps[turn++ % apps.length]!;
        try {
          const res = await get(app.url, path, token);
          if (res.status === 200) answered++;
          else failures.push(`${path} ${res.status} ${res.body.slice(0, 200)}`);
          return;
        } catch (error) {
          if (!notTaken(error)) return void failures.push(`${path} ${String(error)}`);
          await sleep(20);
        }
      }
      failures.push(`${path}: no instance took it`);
    };
    let running = true;
    const loop = async (path: string) => {
      while (running) await send(path);
    };
    const load = [loop("/api/auth/me"), loop("/api/auth/me"), loop("/api/auth/me"), loop(SLOW)];
    try {
      await sleep(1_500);
      for (const i of [0, 1]) {
        const old = apps[i]!;
        // A read of the slow site under way on this very instance when it is told to stop.
        const inFlight = get(old.url, SLOW, token);
        await sleep(300);
        const stopped = old.stop();
        const answer = await inFlight;
        expect(answer.status, answer.body).toBe(200);
        await stopped;
        expect(old.output()).toMatch(/"event":"server.stopped","unfinishedRequests":0/);
        apps[i] = await startApp(ENV());
        await sleep(1_000);
      }
    } finally {
      running = false;
      await Promise.all(load);
      await Promise.all(apps.map((a) => a.stop()));
    }
    expect(failures).toEqual([]);
    expect(answered).toBeGreaterThan(50);
  }, 120_000);
});

describe("WORKERS=2", () => {
  const pidsOf = (output: string) => [...output.matchAll(/工作进程 \d+，pid (\d+)/g)].map((m) => Number(m[1]));
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it("serves one port from two processes, replaces one that dies, and stops both, finishing what they took", async () => {
    const app = await startApp({ ...ENV(), WORKERS: "2" });
    try {
      for (let i = 0; i < 100 && pidsOf(app.output()).length < 2; i++) await sleep(100);
      const pids = pidsOf(app.output());
      expect(pids).toHaveLength(2);
      const { token } = await signInOverHttp(app.url, { userId: 501, accessToken: USER.accessToken, siteId });
      // The port answers, whichever worker takes the connection.
      const answers = await Promise.all(Array.from({ length: 20 }, () => get(app.url, "/api/auth/me", token)));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));

      // One dies: another takes its place, and the port is served throughout.
      process.kill(pids[0]!, "SIGKILL");
      for (let i = 0; i < 150 && pidsOf(app.output()).length < 3; i++) await sleep(100);
      const [, survivor, replacement] = pidsOf(app.output());
      expect(replacement).toBeDefined();
      expect((await get(app.url, "/api/auth/me", token)).status).toBe(200);

      // SIGTERM: the slow read under way finishes, then both workers and the primary are gone.
      const inFlight = Promise.all([get(app.url, SLOW, token), get(app.url, SLOW, token)]);
      await sleep(300);
      const stopped = app.stop();
      expect((await inFlight).map((a) => a.status)).toEqual([200, 200]);
      await stopped;
      await sleep(200);
      expect([survivor!, replacement!].filter(alive)).toEqual([]);
      await expect(get(app.url, "/api/auth/me", token)).rejects.toThrow();
    } finally {
      await app.stop();
    }
  }, 90_000);

  it("is refused on SQLite, saying why", async () => {
    const sqlite = tempSqlite();
    try {
      await expect(startApp({ DATABASE_URL: sqlite.url, DATA_DIR: sqlite.dir, WORKERS: "2" })).rejects.toThrow(
        /WORKERS 大于 1 需要 PostgreSQL/,
      );
      await expect(startApp({ DATABASE_URL: sqlite.url, DATA_DIR: sqlite.dir, WORKERS: "many" })).rejects.toThrow(
        /WORKERS: 必须是 1 到 64 之间的整数，或 auto/,
      );
    } finally {
      await sqlite.cleanup();
    }
  });
});
