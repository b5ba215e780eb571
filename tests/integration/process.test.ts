import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { Agent, get as httpGet } from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway } from "../../src/demo/gateway";
import { demoHistory } from "../../src/demo/history";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempSqlite, type TempDb } from "../support/db";
import { request } from "../support/http";
import { freePort, ROOT, startApp } from "../support/server";

/**
 * The process stays up and stops as asked: `npm start` passes a supervisor's SIGTERM on and the
 * server drains and exits (nothing left serving); a server that dies by itself under `npm start`
 * is started again; a second signal during the drain does not cut it short.
 */

const SESSION_PASSWORD = "process-test-session-password-0123456789";
const closers: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function store(): TempDb {
  const s = tempSqlite();
  closers.push(() => s.cleanup());
  return s;
}

/** The processes started under `pid`, at any depth. */
function descendants(pid: number): Array<{ pid: number; cmd: string }> {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: Array<{ pid: number; cmd: string }> = [];
  const walk = (p: number) => {
    for (const child of parents.get(p) ?? []) {
      let cmd = "";
      try {
        cmd = readFileSync(`/proc/${child}/cmdline`, "utf8").replace(/\0/g, " ");
      } catch {
        // gone meanwhile
      }
      out.push({ pid: child, cmd });
      walk(child);
    }
  };
  walk(pid);
  return out;
}

/** Whether the process runs (a zombie waiting for its parent does not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

const answers = async (url: string) =>
  fetch(`${url}/api/ready`)
    .then(async (r) => (await r.arrayBuffer(), true))
    .catch(() => false);

async function until(what: string, ok: () => Promise<boolean> | boolean, ms: number): Promise<number> {
  const started = Date.now();
  while (!(await ok())) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return Date.now() - started;
}

/** `npm start` on a prepared store, on a free port; its output and the whole tree's processes. */
async function npmStart(s: TempDb): Promise<{ npm: ChildProcess; url: string; output: () => string }> {
  const port = await freePort();
  const npm = spawn("npm", ["start"], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: s.url,
      DATA_DIR: s.dir,
      SESSION_PASSWORD,
      HOST: "127.0.0.1",
      PORT: String(port),
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  npm.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  npm.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const tree = () => descendants(npm.pid ?? 0);
  closers.push(() => {
    for (const p of [...tree(), { pid: npm.pid ?? 0 }]) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });
  const url = `http://127.0.0.1:${port}`;
  await until("npm start to serve", () => answers(url), 90_000);
  return { npm, url, output: () => output };
}

describe("the process", () => {
  it("npm start: SIGTERM to npm (as a supervisor sends it) drains the server and leaves nothing serving", async () => {
    const s = store();
    const { npm, url, output } = await npmStart(s);
    const server = descendants(npm.pid ?? 0).find((p) => p.cmd.includes("gd-server.mjs"));
    expect(server).toBeDefined();
    npm.kill("SIGTERM");
    await until("the server to stop answering", async () => !(await answers(url)), 20_000);
    await until("the server process to exit", () => !alive(server?.pid ?? 0), 20_000);
    expect(output()).toContain('"event":"server.stopped"');
  }, 150_000);

  it("npm start: a server that dies by itself is started again", async () => {
    const s = store();
    const { npm, url, output } = await npmStart(s);
    // Serving for longer than a failed start lasts.
    await new Promise((r) => setTimeout(r, 16_000));
    const server = descendants(npm.pid ?? 0).find((p) => p.cmd.includes("gd-server.mjs"));
    process.kill(server?.pid ?? 0, "SIGKILL");
    await until("the server to answer again", () => answers(url), 60_000);
    expect(output()).toContain('"event":"server.restarted"');
    expect(output()).toContain('"reason":"被强制结束（可能是系统内存不足）"');
    const again = descendants(npm.pid ?? 0).find((p) => p.cmd.includes("gd-server.mjs"));
    expect(again?.pid).not.toBe(server?.pid);
    npm.kill("SIGTERM");
    await until("the server to stop answering", async () => !(await answers(url)), 20_000);
  }, 150_000);

  it("a sign-in's ledger sync stops with the server: no call to its site goes on through the drain", async () => {
    const s = store();
    const now = Math.floor(Date.now() / 1000) - 120;
    const history = demoHistory({ seed: 73, days: 30, callsPerDay: 300, now });
    const busy = {
      accessToken: "sk-process-sync-0123456789abcd",
      data: newApiUser(73, { username: "busy" }),
      ...history,
    };
    const slowUser = {
      accessToken: "sk-process-slow-0123456789abcd",
      data: newApiUser(74, { username: "slow" }),
      logs: [],
    };
    // One site whose log takes 100 ms a page (the sync's backfill), one that answers in 3 s (a
    // sign-in in flight keeps the drain open meanwhile).
    const site = await startGateway({ family: "new-api", users: [busy], latencyMs: 100 });
    const slow = await startGateway({ family: "new-api", users: [slowUser], latencyMs: 3000 });
    closers.push(
      () => site.close(),
      () => slow.close(),
    );
    const siteId = (await siteRegistry(s.db).add({ name: "账本站", url: site.url })).id;
    const slowId = (await siteRegistry(s.db).add({ name: "慢站", url: slow.url })).id;
    const app = await startApp({ DATABASE_URL: s.url, DATA_DIR: s.dir, SESSION_PASSWORD, LEDGER_SYNC_MINUTES: "10" });
    closers.push(() => app.stop());
    const signedIn = await request(app.url, "/api/auth/login", {
      body: { siteId, userId: 73, accessToken: busy.accessToken },
    });
    expect(signedIn.body.success).toBe(true);
    const logReads = () => site.requests.filter((r) => r.path === "/api/log/self").length;
    await until("the sign-in's backfill under way", () => logReads() >= 3, 20_000);
    const inFlight = request(app.url, "/api/auth/login", {
      body: { siteId: slowId, userId: 74, accessToken: slowUser.accessToken },
    });
    await new Promise((r) => setTimeout(r, 200));
    process.kill(app.pid, "SIGTERM");
    const atSignal = Date.now();
    expect((await inFlight).status).toBe(200);
    await until("the server to exit", () => !alive(app.pid), 20_000);
    // The page being read when the signal came may finish; none is asked for after it.
    const after = site.requests.filter((r) => r.path === "/api/log/self" && r.at > atSignal + 150);
    expect(after).toEqual([]);
    expect(app.output()).toContain('"event":"server.stopped"');
  }, 90_000);

  it("a second signal during the drain does not cut it short: the request in flight is answered", async () => {
    const s = store();
    const user = { accessToken: "sk-process-0123456789abcdef", data: newApiUser(71, { username: "slow" }), logs: [] };
    // A site that answers in 1.5 s: a sign-in is in flight when the signals come.
    const site = await startGateway({ family: "new-api", users: [user], latencyMs: 1500 });
    closers.push(() => site.close());
    const siteId = (await siteRegistry(s.db).add({ name: "慢站", url: site.url })).id;
    const app = await startApp({ DATABASE_URL: s.url, DATA_DIR: s.dir, SESSION_PASSWORD });
    closers.push(() => app.stop());
    const signIn = request(app.url, "/api/auth/login", {
      body: { siteId, userId: 71, accessToken: user.accessToken },
    });
    await new Promise((r) => setTimeout(r, 300));
    process.kill(app.pid, "SIGTERM");
    await new Promise((r) => setTimeout(r, 30));
    process.kill(app.pid, "SIGTERM");
    const answered = await signIn;
    expect(answered.status).toBe(200);
    expect(answered.body.success).toBe(true);
    await until("the server to exit", () => !alive(app.pid), 20_000);
    expect(app.output()).toContain('"event":"server.stopped"');
  }, 60_000);
});

describe("a drain under keep-alive load", () => {
  it("answers every request its connections carried; a connection made after the signal is refused, never reset", async () => {
    const s = store();
    const app = await startApp({ DATABASE_URL: s.url, DATA_DIR: s.dir, SESSION_PASSWORD });
    closers.push(() => app.stop());
    const agent = new Agent({ keepAlive: true, maxSockets: 20 });
    closers.push(() => agent.destroy());
    const get = () =>
      new Promise<number>((resolve, reject) => {
        const req = httpGet(`${app.url}/api/health`, { agent }, (res) => {
          res.resume();
          res.once("end", () => resolve(res.statusCode ?? 0));
        });
        req.once("error", reject);
      });
    let answered = 0;
    let stopping = false;
    const failures: string[] = [];
    const loads = Array.from({ length: 20 }, async () => {
      for (;;) {
        try {
          expect(await get()).toBe(200);
          answered++;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code ?? String(error);
          // Refused: the server no longer listens, as it should once stopping (a load balancer
          // sends the next request elsewhere). Anything else cut a request it had taken.
          if (code === "ECONNREFUSED" && stopping) return;
          failures.push(code);
          if (failures.length > 50) return;
        }
      }
    });
    await until("load under way", () => answered > 200, 20_000);
    stopping = true;
    process.kill(app.pid, "SIGTERM");
    await Promise.all(loads);
    console.log(`${answered} answered, failures: ${JSON.stringify(failures)}`);
    expect(failures).toEqual([]);
    await until("the server to exit", () => !alive(app.pid), 20_000);
    expect(app.output()).toContain('"event":"server.stopped"');
  }, 60_000);
});
