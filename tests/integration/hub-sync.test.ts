import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempStore, type TempDb } from "../support/db";
import { HubClient, HubSyncError, decryptLikeHub, hubAccount, type HubAccount } from "../support/hub-client";
import { startApp, type RunningApp } from "../support/server";
import { WORKSPACE_PASSWORD, apiTokenOverHttp, workspaceOverHttp } from "../support/http";

/**
 * Live sync with the All API Hub extension (docs/design.md 26), end to end: the production server,
 * a stand-in of the extension's WebDAV client (its requests, merge and encryption), and stand-in
 * gateways that verify every token. Accounts flow both ways; what the service does not use comes
 * back as the extension wrote it.
 */

let store: TempDb;
let app: RunningApp;
let site: RunningGateway;
let unregistered: RunningGateway;
let siteId = 0;

const user = (id: number, name: string): GatewayUser => ({
  accessToken: `sk-${name}-${"0123456789abcdef".repeat(2)}`,
  data: newApiUser(id, { username: name }),
});
const DORA = user(801, "dora");
const EVAN = user(802, "evan");
const FINN = user(803, "finn");
const GWEN = user(804, "gwen");
const HUGO = user(805, "hugo");

async function api(method: string, path: string, token: string | null, body?: unknown) {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { success: boolean; message?: string; data: Record<string, unknown> },
  };
}

type HubItem = { result: string; name: string; message: string | null };
type HubStatus = {
  address: string;
  hasPassphrase: boolean;
  unsynced: { name: string; message: string }[];
  runs: { message: string | null; items: HubItem[] }[];
};
type Account = { id: number; userId: number; alias: string | null; tags: string[]; pinned: boolean; state: string };

const statusOf = async (token: string): Promise<HubStatus> =>
  (await api("GET", "/api/workspace/hub-sync", token)).body.data as HubStatus;

/** A new workspace, its device token and a sync credential. */
async function workspace() {
  const token = await workspaceOverHttp(app.url, `同步${Math.random().toString(36).slice(2, 8)}`);
  return { token, sync: await apiTokenOverHttp(app.url, token, "sync") };
}

const accountsOf = async (token: string) =>
  ((await api("GET", "/api/workspace/accounts", token)).body.data as { accounts: Account[] }).accounts;

const client = (sync: string, more: Partial<ConstructorParameters<typeof HubClient>[0]> = {}, local = {}) =>
  new HubClient({ base: `${app.url}/dav/`, user: "sync", pass: sync, ...more }, local);

beforeAll(async () => {
  store = await tempStore();
  site = await startGateway({
    family: "new-api",
    users: [DORA, EVAN, FINN, GWEN],
    requireUserHeader: true,
    failureStatus: 401,
  });
  unregistered = await startGateway({
    family: "new-api",
    users: [HUGO],
    requireUserHeader: true,
    failureStatus: 401,
    status: { system_name: "扩展里的站" },
  });
  siteId = (await siteRegistry(store.db).add({ name: "同步站", url: site.url })).id;
  app = await startApp({
    DATABASE_URL: store.url,
    DATA_DIR: store.dir,
    SITE_TIMEOUT_MS: "2000",
    LOGIN_RATE_LIMIT: "0",
    WORKSPACE_SITES_ALLOW_PRIVATE: "1",
    // Each workspace registered from its own address (three creations an hour per address).
    TRUST_PROXY: "127.0.0.1",
  });
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await site?.close();
  await unregistered?.close();
  await store?.cleanup();
});

describe("the WebDAV folder", () => {
  it("opens with the sync credential only, and that credential opens nothing else", async () => {
    const { token, sync } = await workspace();
    // No credential, a wrong one, a device's token and a read token: 401 as the extension expects.
    expect((await fetch(`${app.url}/dav/`, { method: "PROPFIND", headers: { Depth: "0" } })).status).toBe(401);
    const read = (await api("POST", "/api/workspace/tokens", token, { name: "只读", access: "read" })).body.data
      .token as string;
    for (const pass of ["wrong", token, read]) {
      await expect(client(pass).testConnection()).rejects.toThrow(HubSyncError);
    }
    await client(sync).testConnection();
    // As a Bearer elsewhere, the sync credential is refused.
    const elsewhere = await api("GET", "/api/workspace/accounts", sync);
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.message).toBe("同步凭据只能用于 All API Hub 的 WebDAV 同步");
    // The credential is listed with its access, and revoking it closes the folder.
    const listed = (await api("GET", "/api/workspace/tokens", token)).body.data.tokens as {
      id: string;
      access: string;
    }[];
    const credential = listed.find((t) => t.access === "sync")!;
    await api("DELETE", `/api/workspace/tokens/${credential.id}`, token);
    await expect(client(sync).testConnection()).rejects.toThrow("authFailed");
  });

  it("mints a sync credential only with the workspace password, counted as every password check is", async () => {
    const token = await workspaceOverHttp(app.url, `凭据${Math.random().toString(36).slice(2, 8)}`);
    const without = await api("POST", "/api/workspace/tokens", token, { name: "扩展", access: "sync" });
    // A missing parameter is answered in words, as every bad input is (docs/api.md).
    expect([without.status, without.body.success]).toEqual([200, false]);
    expect(without.body.message).toBe("创建同步凭据需要输入工作区密码");
    const wrong = await api("POST", "/api/workspace/tokens", token, { name: "扩展", access: "sync", password: "nope" });
    expect(wrong.body).toEqual({ success: false, message: "当前密码错误（再错 4 次此设备将退出登录）" });
    const listed = (await api("GET", "/api/workspace/tokens", token)).body.data.tokens as unknown[];
    expect(listed).toHaveLength(0);
    // A read or write token still asks for none; a program's token mints nothing.
    const write = await api("POST", "/api/workspace/tokens", token, { name: "脚本", access: "write" });
    expect(write.status).toBe(200);
    const byProgram = await api("POST", "/api/workspace/tokens", write.body.data.token as string, {
      ...{ name: "扩展", access: "sync", password: WORKSPACE_PASSWORD },
    });
    expect(byProgram.status).toBe(403);
    const made = await api("POST", "/api/workspace/tokens", token, {
      ...{ name: "扩展", access: "sync", password: WORKSPACE_PASSWORD },
    });
    expect(made.status).toBe(200);
    await client(made.body.data.token as string).testConnection();
    // Wrong passwords end the device as the backup's do.
    for (let i = 0; i < 5; i++) {
      await api("POST", "/api/workspace/tokens", token, { name: "扩展", access: "sync", password: `guess ${i}` });
    }
    expect((await api("GET", "/api/workspace/tokens", token)).status).toBe(401);
  });

  it("takes at most 30 uploads a minute into a workspace's folder, then 429 with Retry-After", async () => {
    const { sync } = await workspace();
    const put = () =>
      fetch(`${app.url}/dav/all-api-hub-backup/upload.tmp`, {
        method: "PUT",
        headers: { authorization: `Basic ${Buffer.from(`sync:${sync}`).toString("base64")}` },
        body: "{}",
      });
    const statuses: number[] = [];
    for (let i = 0; i < 31; i++) statuses.push((await put()).status);
    expect(statuses.slice(0, 30).every((s) => s === 201 || s === 204)).toBe(true);
    const refused = await put();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.text()).toBe("同步写入过于频繁，请稍后再试");
  });

  it("answers an empty workspace's file as missing, and takes the extension's first upload", async () => {
    const { sync } = await workspace();
    const hub = client(sync);
    await hub.syncOnce();
    expect(hub.trace.map((t) => `${t.method} ${t.status}`)).toEqual([
      "PROPFIND 207",
      "MKCOL 405",
      "GET 404",
      "MKCOL 405",
      "PROPFIND 207",
      "PUT 201",
      "GET 200",
      "MOVE 201",
    ]);
    // The copy was moved: the folder holds the file only.
    const listing = await fetch(`${app.url}/dav/all-api-hub-backup`, {
      method: "PROPFIND",
      headers: { Depth: "1", Authorization: `Basic ${Buffer.from(`x:${sync}`).toString("base64")}` },
    });
    const xml = await listing.text();
    expect(xml).toContain("<d:href>/dav/all-api-hub-backup/all-api-hub-1-0.json</d:href>");
    expect(xml).not.toContain(".tmp.");
    // A copy that is not there is not moved; a file outside the folder is not taken.
    const basic = { Authorization: `Basic ${Buffer.from(`x:${sync}`).toString("base64")}` };
    const moved = await fetch(`${app.url}/dav/all-api-hub-backup/none.tmp`, {
      method: "MOVE",
      headers: { ...basic, Destination: `${app.url}/dav/all-api-hub-backup/all-api-hub-1-0.json` },
    });
    expect(moved.status).toBe(404);
    const outside = await fetch(`${app.url}/dav/my.json`, { method: "PUT", headers: basic, body: "{}" });
    expect(outside.status).toBe(404);
    expect(await outside.text()).toContain("all-api-hub-backup/all-api-hub-1-0.json");
  });
});

describe("two devices", () => {
  it("keep a deletion: a device's older copy written after it does not bring the account back", async () => {
    const { token, sync } = await workspace();
    const t0 = Date.now() - 60_000;
    const record = (id: string, userId: number, user: GatewayUser, name: string) =>
      hubAccount(id, { url: site.url, name: "同步站" }, { id: userId, token: user.accessToken, username: name }, t0);
    const first = client(
      sync,
      {},
      { accounts: [record("account-f", 803, FINN, "finn"), record("account-g", 804, GWEN, "gwen")] },
    );
    await first.syncOnce();
    expect((await accountsOf(token)).map((a) => a.userId).sort()).toEqual([803, 804]);
    const second = client(sync);
    await second.syncOnce();
    expect(second.local.accounts.map((a) => a.id).sort()).toEqual(["account-f", "account-g"]);
    // Both read the file; the first deletes Finn and writes; then the second writes what it read.
    first.remove("account-f");
    const late = client(sync, { beforeUpload: () => first.syncOnce() }, second.local);
    await late.syncOnce();
    // As if one after the other: Finn stays deleted.
    expect((await accountsOf(token)).map((a) => a.userId)).toEqual([804]);
    await first.syncOnce();
    expect(first.local.accounts.map((a) => a.id)).toEqual(["account-g"]);
  });

  it("give a device the file before or after a merge, never halfway", async () => {
    const { token, sync } = await workspace();
    // Eight accounts verified four at a time: between the two rounds, four are saved and not linked yet.
    const many = Array.from({ length: 8 }, (_, i) => user(900 + i, `slow${i}`));
    const slow = await startGateway({ family: "new-api", users: many, latencyMs: 400 });
    try {
      const t0 = Date.now() - 60_000;
      const users = many.map((u): [number, GatewayUser] => [Number(u.data.id), u]);
      const records = users.map(([id, u]) =>
        hubAccount(
          `account-${id}`,
          { url: slow.url, name: "慢站" },
          { id, token: u.accessToken, username: `u${id}` },
          t0,
        ),
      );
      const writer = client(sync, {}, { accounts: records });
      const reader = client(sync);
      // A read while the write's accounts are being verified with the slow site.
      const writing = writer.syncOnce();
      // After the site's probe and the first round of verifications, within the second.
      for (let i = 0; i < 100 && slow.requests.filter((r) => r.path === "/api/user/self").length < 4; i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 150));
      await reader.syncOnce();
      // What the read gave: the file before the merge or after it, each account once.
      const seen = reader.local.accounts.map((a) => String(a.account_info.id));
      expect(new Set(seen).size).toBe(seen.length);
      expect([0, 8]).toContain(seen.length);
      await writing;
      await reader.syncOnce();
      const ids = reader.local.accounts.map((a) => a.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.sort()).toEqual(records.map((r) => r.id).sort());
      expect(await accountsOf(token)).toHaveLength(8);
    } finally {
      await slow.close();
    }
  });
});

describe("two-way sync", () => {
  it("brings the extension's accounts in, gives the workspace's out, and keeps what it does not use", async () => {
    const { token, sync } = await workspace();
    // The workspace holds Dora; the extension holds Evan, Hugo on a site nobody registered, a cookie account.
    const saved = await api("POST", "/api/workspace/accounts", token, {
      siteId,
      userId: 801,
      accessToken: DORA.accessToken,
    });
    expect(saved.body.success).toBe(true);
    const t0 = Date.now() - 60_000;
    const evan = hubAccount(
      "account-evan",
      { url: site.url, name: "同步站" },
      { id: 802, token: EVAN.accessToken, username: "evan" },
      t0,
      {
        notes: "main relay",
        tagIds: ["tag-paid"],
      },
    );
    const hugo = hubAccount(
      "account-hugo",
      { url: unregistered.url, name: "扩展里的站" },
      { id: 805, token: HUGO.accessToken, username: "hugo" },
      t0,
    );
    const cookie = hubAccount(
      "account-cookie",
      { url: site.url, name: "Cookie 站", type: "one-hub" },
      { id: 77, token: "", username: "bob" },
      t0,
      {
        authType: "cookie",
        cookieAuth: { sessionCookie: "session=abc" },
      },
    );
    const rest = {
      preferences: { themeMode: "dark", sharedPreferencesLastUpdated: t0, lastUpdated: t0 },
      tagStore: {
        version: 1,
        tagsById: { "tag-paid": { id: "tag-paid", name: "paid", createdAt: t0, updatedAt: t0 } },
      },
      channelConfigs: { schemaVersion: 1, configs: {} },
    };
    const bookmarks = [
      {
        id: "bookmark-1",
        name: "状态页",
        url: "https://status.example.com",
        tagIds: [],
        notes: "",
        created_at: t0,
        updated_at: t0,
      },
    ];
    const hub = client(
      sync,
      {},
      {
        accounts: [evan, hugo, cookie],
        bookmarks,
        pinnedAccountIds: ["account-evan"],
        orderedAccountIds: ["account-cookie", "account-evan", "account-hugo"],
        rest,
      },
    );
    await hub.syncOnce();

    // Here: Evan and Hugo verified and saved (Hugo's site added after its probe), the cookie account listed, not saved.
    const accounts = await accountsOf(token);
    expect(accounts.map((a) => a.userId).sort()).toEqual([801, 802, 805]);
    expect(accounts.find((a) => a.userId === 802)).toMatchObject({ alias: "同步站", tags: ["paid"], pinned: true });
    const status = await statusOf(token);
    expect(status.address).toBe(`${app.url}/dav/`);
    const items = status.runs[0]!.items;
    expect(
      items
        .filter((i) => i.result === "added")
        .map((i) => i.name)
        .sort(),
    ).toEqual(["同步站 · evan", "扩展里的站 · hugo"]);
    expect(items.find((i) => i.name === "Cookie 站 · bob")).toMatchObject({ result: "skipped" });
    expect(status.unsynced.map((u) => u.name)).toEqual(["Cookie 站 · bob"]);

    // There: the extension took Dora from the workspace's file at the same sync.
    const dora = hub.local.accounts.find((a) => a.account_info.id === "801") as HubAccount;
    expect(dora).toMatchObject({ site_url: site.url, authType: "access_token", configVersion: 7 });
    expect(dora.account_info.access_token).toBe(DORA.accessToken);

    // A second browser with an empty extension gets every access-token account, and the rest as written.
    const fresh = client(sync);
    await fresh.syncOnce();
    expect(fresh.local.accounts.map((a) => a.id).sort()).toEqual(
      [dora.id, "account-cookie", "account-evan", "account-hugo"].sort(),
    );
    expect(fresh.local.accounts.find((a) => a.id === "account-evan")).toEqual(evan);
    expect(fresh.local.accounts.find((a) => a.id === "account-cookie")).toEqual(cookie);
    expect(fresh.local.rest.preferences).toEqual(rest.preferences);
    expect(fresh.local.rest.tagStore).toEqual(rest.tagStore);

    // Changed here: Evan's token renewed (the site now takes only the new one), Hugo removed.
    const evanId = accounts.find((a) => a.userId === 802)!.id;
    const hugoId = accounts.find((a) => a.userId === 805)!.id;
    EVAN.accessToken = `sk-evan-renewed-${"9".repeat(20)}`;
    const renewed = await api("PATCH", `/api/workspace/accounts/${evanId}`, token, { accessToken: EVAN.accessToken });
    expect(renewed.body.success).toBe(true);
    await api("DELETE", `/api/workspace/accounts/${hugoId}`, token);
    await hub.syncOnce();
    expect(hub.account("account-evan")!.account_info.access_token).toBe(EVAN.accessToken);
    // Evan's own fields the extension wrote stay as they were.
    expect(hub.account("account-evan")).toMatchObject({ notes: "main relay", tagIds: ["tag-paid"] });
    expect(hub.account("account-hugo")).toBeUndefined();
    expect(hub.local.deletedEntryRecords["account-hugo"]).toMatchObject({ kind: "account" });
    expect(hub.local.bookmarks).toEqual(bookmarks);
    // …and the extension's next write, carrying both, changes nothing here.
    await hub.syncOnce();
    expect((await accountsOf(token)).map((a) => a.userId).sort()).toEqual([801, 802]);
    const again = await statusOf(token);
    expect(again.runs[0]!.items).toEqual([]);

    // Changed there: Dora's token renewed in the extension (verified with the site), Evan deleted.
    DORA.accessToken = `sk-dora-renewed-${"8".repeat(20)}`;
    const before = site.requests.length;
    hub.edit(dora.id, (a) => {
      a.account_info.access_token = DORA.accessToken;
    });
    hub.remove("account-evan");
    await hub.syncOnce();
    const now = await accountsOf(token);
    expect(now.map((a) => a.userId)).toEqual([801]);
    expect(now[0]!.state).toBe("ok");
    expect(site.requests.slice(before).some((r) => r.headers.authorization === DORA.accessToken)).toBe(true);
    const last = (await statusOf(token)).runs[0]!.items;
    expect(last).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ result: "removed" }),
        expect.objectContaining({ result: "changed", name: "同步站 · dora" }),
      ]),
    );
  });

  it("keeps an account the extension deleted when the workspace says so, and never asks twice about a refused token", async () => {
    const { token, sync } = await workspace();
    await api("PUT", "/api/workspace/hub-sync", token, { deletes: "keep" });
    const t0 = Date.now() - 60_000;
    const finn = hubAccount(
      "account-finn",
      { url: site.url, name: "同步站" },
      { id: 803, token: FINN.accessToken, username: "finn" },
      t0,
    );
    const wrong = hubAccount(
      "account-wrong",
      { url: site.url, name: "同步站" },
      { id: 804, token: "sk-not-gwens-token-000000000", username: "gwen" },
      t0,
    );
    const hub = client(sync, {}, { accounts: [finn, wrong] });
    await hub.syncOnce();
    expect((await accountsOf(token)).map((a) => a.userId)).toEqual([803]);
    const runs = (await statusOf(token)).runs;
    expect(runs[0]!.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ result: "refused", name: "同步站 · gwen" })]),
    );
    // The refused token is kept in the file as the extension wrote it, and not sent to the site again.
    const before = site.requests.length;
    hub.remove("account-finn");
    await hub.syncOnce();
    expect(site.requests.slice(before).some((r) => r.headers.authorization === "sk-not-gwens-token-000000000")).toBe(
      false,
    );
    expect(hub.account("account-wrong")).toEqual(wrong);
    expect((await accountsOf(token)).map((a) => a.userId)).toEqual([803]);
    const status = await statusOf(token);
    // Listed once when it was refused; since then only among the accounts not synced.
    expect(status.runs[0]!.items).toEqual([
      { result: "kept", name: "同步站", message: "扩展中已删除；按工作区设置在此保留" },
    ]);
    expect(status.unsynced).toEqual([{ name: "同步站 · gwen", message: expect.any(String) as string }]);
  });

  it("reads and writes the extension's encrypted file with the workspace's passphrase, and says why without it", async () => {
    const { token, sync } = await workspace();
    await api("POST", "/api/workspace/accounts", token, { siteId, userId: 804, accessToken: GWEN.accessToken });
    const hub = client(sync, { encPassword: "  correct horse  " });
    // No passphrase here: the write is refused with the reason, and the result says it.
    await expect(hub.syncOnce()).rejects.toThrow("safeCommitFailed 422");
    const empty = client(sync, { encPassword: "correct horse" });
    const status = await statusOf(token);
    expect(status.runs[0]!.message).toContain("没有保存加密密码");

    await api("PUT", "/api/workspace/hub-sync", token, { passphrase: "correct horse" });
    expect((await statusOf(token)).hasPassphrase).toBe(true);
    await empty.syncOnce();
    expect(empty.local.accounts.map((a) => a.account_info.id)).toEqual(["804"]);
    // What the folder gives now is the envelope, opened by the extension's own way of opening it.
    const raw = await fetch(`${app.url}/dav/all-api-hub-backup/all-api-hub-1-0.json`, {
      headers: { Authorization: `Basic ${Buffer.from(`x:${sync}`).toString("base64")}` },
    });
    const envelope = JSON.parse(await raw.text()) as Record<string, unknown>;
    expect(envelope).toMatchObject({ type: "all-api-hub-webdav-backup-encrypted", v: 1, iter: 250_000 });
    const plain = JSON.parse(await decryptLikeHub(envelope, "correct horse")) as { version: string };
    expect(plain.version).toBe("4.0");
    // A wrong passphrase is told apart from none: the extension cannot open what it reads, nor this side what it writes.
    await api("PUT", "/api/workspace/hub-sync", token, { passphrase: "another one" });
    await expect(empty.syncOnce()).rejects.toThrow();
    await expect(empty.upload(JSON.stringify({ version: "4.0", timestamp: 1 }, null, 2))).rejects.toThrow(
      "safeCommitFailed 422",
    );
    expect((await statusOf(token)).runs[0]!.message).toContain("无法解开");
  });
});
