import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import { closeDb, createDb } from "../../src/server/db/client";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempStore, type TempDb } from "../support/db";
import { HubClient, hubAccount } from "../support/hub-client";
import { apiTokenOverHttp, workspaceOverHttp } from "../support/http";
import { startApp, type RunningApp } from "../support/server";

/**
 * The extension's sync through a server killed while it merges a write (SIGKILL, real processes):
 * what the device was told succeeded stays; what was cut short is merged again at the device's
 * next sync, never rolled back over the device's newer value; the dead process's hold on the
 * workspace ends with it (within its 20 s), not two minutes later.
 */
let store: TempDb;
let site: RunningGateway;
let siteId = 0;
const apps: RunningApp[] = [];
const env = () => ({
  DATABASE_URL: store.url,
  DATA_DIR: store.dir,
  SITE_TIMEOUT_MS: "5000",
  LOGIN_RATE_LIMIT: "0",
  TRUST_PROXY: "127.0.0.1",
});
const IVY: GatewayUser = {
  accessToken: `sk-ivy-${"0123456789abcdef".repeat(2)}`,
  data: newApiUser(806, { username: "ivy" }),
};

beforeAll(async () => {
  store = await tempStore();
  // Every answer takes a while: a merge's verification is under way for long enough to be cut short.
  site = await startGateway({
    family: "new-api",
    users: [IVY],
    requireUserHeader: true,
    failureStatus: 401,
    latencyMs: 1500,
  });
  const db = createDb(store.url);
  siteId = (await siteRegistry(db).add({ name: "同步站", url: site.url })).id;
  await closeDb(db);
}, 60_000);
afterAll(async () => {
  for (const app of apps) await app.stop().catch(() => undefined);
  await site?.close();
  await store?.cleanup();
});

async function accountToken(token: string, app: RunningApp): Promise<{ state: string; userId: number }[]> {
  const res = await fetch(`${app.url}/api/workspace/accounts`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { data: { accounts: { state: string; userId: number }[] } }).data.accounts;
}

describe("a server killed while it merges a device's write", () => {
  it("merges the renewed token again at the next sync, and never sets the device back to the old one", async () => {
    let app = await startApp(env());
    apps.push(app);
    const token = await workspaceOverHttp(app.url, "被杀的合并");
    const sync = await apiTokenOverHttp(app.url, token, "sync");
    const t0 = Date.now() - 60_000;
    const device = new HubClient(
      { base: `${app.url}/dav/`, user: "sync", pass: sync },
      {
        accounts: [
          hubAccount(
            "account-ivy",
            { url: site.url, name: "同步站" },
            { id: 806, token: IVY.accessToken, username: "ivy" },
            t0,
          ),
        ],
      },
    );
    await device.syncOnce();
    expect((await accountToken(token, app)).map((a) => [a.userId, a.state])).toEqual([[806, "ok"]]);
    expect(siteId).toBeGreaterThan(0);

    // The person renews the token on the site and in the extension; the site answers slowly now.
    const renewed = `sk-ivy-renewed-${"fedcba9876543210".repeat(2)}`;
    IVY.accessToken = renewed;
    device.edit("account-ivy", (a) => {
      a.account_info = { ...a.account_info, access_token: renewed };
    });
    // The server dies while the write's token is being verified with the site: once the device
    // has read its copy back and sent the MOVE that merges it.
    const before = device.trace.length;
    const writing = device.syncOnce().catch(() => "cut");
    const readBack = () => device.trace.slice(before).some((t) => t.method === "GET" && t.path.includes(".tmp."));
    for (let i = 0; i < 200 && !readBack(); i++) await new Promise((r) => setTimeout(r, 25));
    expect(readBack()).toBe(true);
    await new Promise((r) => setTimeout(r, 500));
    await app.kill();
    expect(await writing).toBe("cut");

    app = await startApp(env());
    apps.push(app);
    const again = new HubClient({ base: `${app.url}/dav/`, user: "sync", pass: sync }, device.local);
    // The next sync: no two-minute wait on the dead process's hold, the renewed token kept.
    const started = Date.now();
    await again.syncOnce();
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(again.account("account-ivy")?.account_info.access_token).toBe(renewed);
    const accounts = await accountToken(token, app);
    expect(accounts.map((a) => [a.userId, a.state])).toEqual([[806, "ok"]]);
    // The workspace holds the renewed token: the next read gives it back as it is.
    const third = new HubClient({ base: `${app.url}/dav/`, user: "sync", pass: sync }, again.local);
    await third.syncOnce();
    expect(third.account("account-ivy")?.account_info.access_token).toBe(renewed);
  }, 120_000);
});
