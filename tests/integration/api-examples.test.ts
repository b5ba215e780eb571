import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway } from "../../src/demo/gateway";
import { demoHistory } from "../../src/demo/history";
import { setOperatorPassword } from "../../src/server/admin/operator";
import { findEndpoint } from "../../src/server/http/dispatch";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempSqlite, type TempDb } from "../support/db";
import { request } from "../support/http";
import { ROOT, startApp, type RunningApp } from "../support/server";

/**
 * Every curl example of docs/api.md, run as written against a running server with the demo's
 * site and credentials: each request reaches an endpoint (no 404, 405 or redirect, no fault).
 */

const DEMO_TOKEN = "demo-access-token-0123456789";
const ADMIN_PASSWORD = "examples-operator-password";
const METRICS_TOKEN = "examples-metrics-token-0123456789";
const run = promisify(execFile);

let store: TempDb;
let site: RunningGateway;
let app: RunningApp;
let workspaceToken: string;
let syncToken: string;
let work: string;

beforeAll(async () => {
  store = tempSqlite();
  const history = demoHistory({ seed: 2026, days: 5, callsPerDay: 40 });
  site = await startGateway({
    family: "new-api",
    status: { checkin_enabled: true },
    codes: [{ key: "DEMO-REDEEM-10-USD-0001", quota: 5_000_000, status: 1, id: 1 }],
    users: [
      {
        accessToken: DEMO_TOKEN,
        data: newApiUser(1, { username: "demo", display_name: "演示用户", quota: history.totals.quota }),
        logs: history.logs,
        tokens: history.tokens,
        topups: history.topups,
      },
    ],
  });
  await siteRegistry(store.db).add({ name: "演示站点", url: site.url });
  await setOperatorPassword(store.db, ADMIN_PASSWORD, "示例");
  app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    METRICS_TOKEN,
    // The examples sign in more often than a person would in a minute.
    LOGIN_RATE_LIMIT: "0",
  });
  const made = await request(app.url, "/api/workspace/register", {
    body: { name: "演示工作区", password: "demo-workspace-password" },
  });
  workspaceToken = (made.body.data as { token: string }).token;
  const saved = await request(app.url, "/api/workspace/accounts", {
    headers: { authorization: `Bearer ${workspaceToken}` },
    body: { siteId: 1, userId: 1, accessToken: DEMO_TOKEN },
  });
  expect(saved.status).toBe(200);
  const sync = await request(app.url, "/api/workspace/tokens", {
    headers: { authorization: `Bearer ${workspaceToken}` },
    body: { name: "扩展", access: "sync", password: "demo-workspace-password" },
  });
  syncToken = (sync.body.data as { token: string }).token;
  work = mkdtempSync(path.join(tmpdir(), "gd-examples-"));
  // The backup file the All API Hub example puts into the WebDAV folder.
  writeFileSync(
    path.join(work, "all-api-hub-backup.json"),
    JSON.stringify({ version: "4.0", timestamp: Date.now(), accounts: { accounts: [] } }, null, 2),
  );
});
afterAll(async () => {
  await app?.stop();
  await site?.close();
  await store?.cleanup();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The shell blocks of the document, each as its commands (continued lines joined). */
function shellBlocks(): string[][] {
  const text = readFileSync(path.join(ROOT, "docs/api.md"), "utf8");
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) =>
    (m[1] ?? "")
      .replace(/\\\n/g, " ")
      .split("\n")
      .map((line) => line.trim())
      // What runs: requests and the variables they use; not the answers shown, comments or npm.
      .filter((line) => /^[A-Z_]+=/.test(line) || (/\bcurl /.test(line) && !line.startsWith("#"))),
  );
}

/** The document's placeholders, as the running demo has them. */
function filled(command: string): string {
  return command
    .replaceAll("gdw_…", workspaceToken)
    .replaceAll("sync:gdk_…", `sync:${syncToken}`)
    .replaceAll('"accessToken":"…"', `"accessToken":"${DEMO_TOKEN}"`)
    .replaceAll('"password":"…"', `"password":"${ADMIN_PASSWORD}"`)
    .replace(/^BASE=.*$/, `BASE=${app.url}`);
}

type Reached = { status: number; method: string; url: string };

describe("docs/api.md", () => {
  it("runs every curl example against a live server, each reaching its endpoint", async () => {
    const blocks = shellBlocks();
    const written =
      blocks
        .flat()
        .join("\n")
        .match(/\bcurl /g)?.length ?? 0;
    expect(written).toBeGreaterThan(50);
    const reached: Reached[] = [];
    // Each request also writes where it went and what it answered, on stderr.
    const preamble = [
      "set +e",
      // Last, so an example's own --write-out gives way to it.
      `curl() { command curl "$@" -w '%{stderr}@@ %{http_code} %{method} %{url_effective}\\n'; }`,
      `BASE=${app.url}`,
      `TOKEN=$(command curl -s -X POST $BASE/api/auth/login -H 'content-type: application/json' -d '{"userId":1,"accessToken":"${DEMO_TOKEN}","siteId":1}' | jq -r .data.sessionToken)`,
      `WS='Authorization: Bearer ${workspaceToken}'`,
      `WS_TOKEN=${workspaceToken}`,
      `METRICS_TOKEN=${METRICS_TOKEN}`,
    ].join("\n");
    for (const block of blocks) {
      if (!block.some((c) => /\bcurl /.test(c))) continue;
      const script = `${preamble}\n${block.map(filled).join("\n")}\n`;
      const { stderr } = await run("bash", ["-c", script], { cwd: work, timeout: 60_000 }).catch(
        (e: { stderr?: string }) => ({ stderr: e.stderr ?? "" }),
      );
      for (const line of stderr.split("\n")) {
        const m = /^@@ (\d{3}) (\S+) (\S+)$/.exec(line);
        if (m) reached.push({ status: Number(m[1]), method: m[2] as string, url: m[3] as string });
      }
    }
    // Every request written ran (a loop may run more).
    expect(reached.length).toBeGreaterThanOrEqual(written);
    const astray = reached.filter(
      (r) =>
        // A 404 of an endpoint is its own answer (no such account); of no endpoint, a path astray.
        // The WebDAV folder and the MCP endpoint are no REST endpoints: there any 4xx is astray too.
        (/^\/(dav\/|api\/mcp$)/.test(new URL(r.url).pathname)
          ? r.status >= 400
          : findEndpoint(r.method, new URL(r.url).pathname).endpoint === null) ||
        r.status === 0 ||
        r.status === 405 ||
        (r.status >= 300 && r.status < 400) ||
        (r.status >= 500 && !(r.status === 503 && r.url.endsWith("/api/ready"))),
    );
    expect(astray).toEqual([]);
  }, 240_000);
});
