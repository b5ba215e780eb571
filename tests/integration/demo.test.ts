import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { signInOverHttp } from "../support/http";
import { ROOT, freePort } from "../support/server";

/**
 * `npm run demo` as a newcomer runs it: the demo sites, the service, and then, once it listens,
 * how to sign in as the last thing the terminal says; the requests' log goes to a file.
 */

const dir = mkdtempSync(path.join(tmpdir(), "gd-demo-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether a port on loopback is free now. */
const free = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });

/** A first port with the next two free as well (the demo's two sites and its inbox). */
async function threeFreePorts(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port < 65_000 && (await free(port + 1)) && (await free(port + 2))) return port;
  }
}

describe("npm run demo", () => {
  it("tells how to sign in last, once the service listens, and writes the request log to a file", async () => {
    const [port, sitesPort] = [await freePort(), await threeFreePorts()];
    const child = spawn(process.execPath, ["--import", "tsx", "scripts/demo.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: "127.0.0.1",
        DEMO_GATEWAY_PORT: String(sitesPort),
        DATA_DIR: dir,
        DATABASE_URL: `file:${path.join(dir, "demo.db")}`,
        SESSION_PASSWORD: "demo-test-session-password-0123456789",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let terminal = "";
    child.stdout.on("data", (d: Buffer) => (terminal += d.toString()));
    child.stderr.on("data", (d: Buffer) => (terminal += d.toString()));
    try {
      const deadline = Date.now() + 150_000;
      while (!terminal.includes("服务器日志")) {
        if (child.exitCode !== null) throw new Error(`the demo ended:\n${terminal}`);
        if (Date.now() > deadline) throw new Error(`the demo did not say how to sign in:\n${terminal}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      // The service listened first; how to sign in is the last block.
      expect(terminal.indexOf("服务已启动")).toBeGreaterThan(-1);
      expect(terminal.indexOf("服务已启动")).toBeLessThan(terminal.indexOf("演示站点已就绪"));
      expect(terminal).toContain("用户ID 1  访问令牌 demo-access-token-0123456789");
      const logFile = path.join(dir, "demo-server.log");
      expect(terminal.trimEnd().split("\n").at(-1)).toBe(`服务器日志（每个请求一行）: ${logFile}`);

      // The credentials shown sign in; the request is in the file, and no log line in the terminal.
      await signInOverHttp(`http://127.0.0.1:${port}`, {
        siteId: 1,
        userId: 1,
        accessToken: "demo-access-token-0123456789",
      });
      await new Promise((r) => setTimeout(r, 500));
      expect(readFileSync(logFile, "utf8")).toContain('"path":"/api/auth/login"');
      expect(terminal.split("\n").filter((l) => l.startsWith("{"))).toEqual([]);

      // The demo workspace has synced with an All API Hub extension once: its cookie account listed as not saved.
      expect(terminal).toContain(`扩展的 WebDAV 地址填 http://127.0.0.1:${port}/dav/`);
      const base = `http://127.0.0.1:${port}`;
      const login = await fetch(`${base}/api/workspace/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "演示工作区", password: "demo-workspace-password" }),
      });
      const { token } = ((await login.json()) as { data: { token: string } }).data;
      const hub = await fetch(`${base}/api/workspace/hub-sync`, { headers: { authorization: `Bearer ${token}` } });
      const { data } = (await hub.json()) as {
        data: { unsynced: { name: string }[]; runs: unknown[]; fileAt: string };
      };
      expect(data.unsynced.map((u) => u.name)).toEqual(["公益站 · guest"]);
      expect(data.runs).toHaveLength(1);
    } finally {
      // A demo that already ended (what the try then says) sends no second exit to wait for.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
    }
  }, 200_000);
});
