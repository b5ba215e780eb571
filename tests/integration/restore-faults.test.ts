import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import type { GatewayOptions } from "../../src/demo/stand-in/types";
import { closeDb, createDb } from "../../src/server/db/client";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempStore, type TempDb } from "../support/db";
import { WORKSPACE_PASSWORD, request, workspaceOverHttp } from "../support/http";
import { startApp, type RunningApp } from "../support/server";

/**
 * A restore killed half way (SIGKILL, real processes): the workspace is left with some accounts
 * and none of the alerts; once its hold lapses, the next restore undoes what the dead one made and
 * restores the whole file, instead of answering that the workspace is not empty.
 */
let store: TempDb;
let site: RunningGateway;
let siteId = 0;
const apps: RunningApp[] = [];
const env = () => ({ DATABASE_URL: store.url, DATA_DIR: store.dir, LOGIN_RATE_LIMIT: "0", TRUST_PROXY: "127.0.0.1" });
const USERS: GatewayUser[] = Array.from({ length: 6 }, (_, i) => ({
  accessToken: `sk-restore-${i}-${"0123456789abcdef".repeat(2)}`,
  data: newApiUser(950 + i, { username: `r${i}` }),
}));

/** The stand-in's options, kept: its latency is changed under the running test. */
const siteOptions: GatewayOptions = { family: "new-api", users: USERS };

beforeAll(async () => {
  store = await tempStore();
  site = await startGateway(siteOptions);
  const db = createDb(store.url);
  siteId = (await siteRegistry(db).add({ name: "恢复站", url: site.url })).id;
  await closeDb(db);
}, 60_000);
afterAll(async () => {
  for (const app of apps) await app.stop().catch(() => undefined);
  await site?.close();
  await store?.cleanup();
});

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const accountsOf = async (app: RunningApp, token: string) =>
  ((await request(app.url, "/api/workspace/accounts", { headers: auth(token) })).body.data as { accounts: unknown[] })
    .accounts;

describe("a restore killed half way", () => {
  it("is undone by the next restore, which restores the whole file", async () => {
    let app = await startApp(env());
    apps.push(app);
    const from = await workspaceOverHttp(app.url, "备份来源");
    for (const u of USERS) {
      const saved = await request(app.url, "/api/workspace/accounts", {
        headers: auth(from),
        body: { siteId, userId: Number(u.data.id), accessToken: u.accessToken },
      });
      expect(saved.body.success).toBe(true);
    }
    const channel = await request(app.url, "/api/alerts/channels", {
      headers: auth(from),
      body: { type: "webhook", name: "钩子", url: "https://hooks.example.com/x" },
    });
    expect(channel.body.success).toBe(true);
    const backup = await fetch(`${app.url}/api/workspace/backup`, {
      method: "POST",
      headers: { ...auth(from), "content-type": "application/json" },
      body: JSON.stringify({ password: WORKSPACE_PASSWORD, passphrase: "backup passphrase" }),
    });
    expect(backup.status).toBe(200);
    const file = await backup.text();

    const into = await workspaceOverHttp(app.url, "恢复目标");
    // The site answers slowly from now on: four accounts are verified at a time, then two more.
    siteOptions.latencyMs = 1200;
    const calls = () => site.requests.filter((r) => r.path === "/api/user/self").length;
    const before = calls();
    const restoring = request(app.url, "/api/workspace/restore", {
      headers: auth(into),
      body: { file, passphrase: "backup passphrase" },
    }).catch(() => null);
    for (let i = 0; i < 300 && calls() < before + 4; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300));
    await app.kill();
    expect(await restoring).toBeNull();

    app = await startApp(env());
    apps.push(app);
    const half = (await accountsOf(app, into)).length;
    expect(half).toBeGreaterThan(0);
    expect(half).toBeLessThan(USERS.length);
    siteOptions.latencyMs = 0;
    // The dead restore's hold lapses (20 s at most); the next restore then undoes it and restores all.
    await new Promise((r) => setTimeout(r, 21_000));
    const again = await request(app.url, "/api/workspace/restore", {
      headers: auth(into),
      body: { file, passphrase: "backup passphrase" },
    });
    expect(again.body.success, String(again.body.message)).toBe(true);
    expect(await accountsOf(app, into)).toHaveLength(USERS.length);
    const channels = await request(app.url, "/api/alerts/channels", { headers: auth(into) });
    expect((channels.body.data as { channels: unknown[] }).channels).toHaveLength(1);
  }, 180_000);
});
