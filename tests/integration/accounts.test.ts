import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway } from "../../src/demo/gateway";
import { siteRegistry } from "../../src/server/sites/registry";
import { tempStore, type TempDb } from "../support/db";
import { request } from "../support/http";
import { startApp, type RunningApp } from "../support/server";

/**
 * Several accounts in one browser, over HTTP with a cookie jar as a browser keeps one: the REST
 * contract with the cookie, and the account procedures the dashboard calls.
 */

let store: TempDb;
let app: RunningApp;
let gateway: RunningGateway;
let other: RunningGateway;
let siteId: number;
let otherSiteId: number;

const USERS = Array.from({ length: 22 }, (_, i) => ({
  id: 401 + i,
  token: `acct-token-${i}-0123456789abcdef`,
}));
const userOf = (i: number) => USERS[i]!;

beforeAll(async () => {
  store = await tempStore();
  const users = USERS.map((u) => ({ accessToken: u.token, data: newApiUser(u.id, { username: `u${u.id}` }) }));
  [gateway, other] = await Promise.all([
    startGateway({ family: "new-api", users }),
    startGateway({ family: "one-hub", users }),
  ]);
  siteId = (await siteRegistry(store.db).add({ name: "甲站", url: gateway.url })).id;
  otherSiteId = (await siteRegistry(store.db).add({ name: "乙站", url: other.url })).id;
  app = await startApp({ DATABASE_URL: store.url, DATA_DIR: store.dir, LOGIN_RATE_LIMIT: "0" });
});
afterAll(async () => {
  await app?.stop();
  await Promise.all([gateway?.close(), other?.close()]);
  await store?.cleanup();
});

/** A browser's cookie jar for the session cookie. */
class Jar {
  cookie = "";
  take(headers: Headers) {
    const set = headers.get("set-cookie");
    if (!set) return;
    const [pair] = set.split(";");
    this.cookie = /Max-Age=0/.test(set) ? "" : (pair ?? "");
  }
  headers(): Record<string, string> {
    return this.cookie ? { cookie: this.cookie } : {};
  }
}

async function login(jar: Jar, user: { id: number; token: string }, site = siteId) {
  const res = await request(app.url, "/api/auth/login", {
    body: { userId: user.id, accessToken: user.token, siteId: site },
    headers: jar.headers(),
  });
  expect(res.body.success, JSON.stringify(res.body)).toBe(true);
  jar.take(res.headers);
  return (res.body.data as { sessionToken: string }).sessionToken;
}

async function me(jar: Jar) {
  const res = await request(app.url, "/api/auth/me", { headers: jar.headers() });
  jar.take(res.headers);
  return res;
}

const meId = async (jar: Jar) => ((await me(jar)).body.data as { userInfo: { id: number } } | undefined)?.userInfo.id;

async function logout(jar: Jar) {
  const res = await request(app.url, "/api/auth/logout", { method: "POST", headers: jar.headers() });
  jar.take(res.headers);
  return res;
}

type Listed = { key: string; active: boolean; userId: number; username: string; site: { id: number; name: string } };
type ListAnswer = { accounts: Listed[]; dropped: { siteId: number; siteName: string; userId: number }[] };

async function trpc<T>(jar: Jar | Record<string, string>, path: string, input?: unknown) {
  const headers = jar instanceof Jar ? jar.headers() : jar;
  const res =
    input === undefined && path.endsWith(".list")
      ? await request(app.url, `/api/trpc/${path}`, { headers })
      : await request(app.url, `/api/trpc/${path}`, { method: "POST", body: input ?? {}, headers });
  if (jar instanceof Jar) jar.take(res.headers);
  const body = res.body as { result?: { data: T }; error?: { message: string } };
  return { status: res.status, data: body.result?.data, error: body.error?.message, headers: res.headers };
}

const list = async (jar: Jar) => (await trpc<ListAnswer>(jar, "account.list")).data!;

describe("the REST contract with a cookie jar", () => {
  it("log in as A, then B: me is B; logout: me is A; logout: 401 and no cookie", async () => {
    const jar = new Jar();
    await login(jar, userOf(0));
    await login(jar, userOf(1));
    expect(await meId(jar)).toBe(userOf(1).id);
    expect((await logout(jar)).body).toEqual({ success: true });
    expect(await meId(jar)).toBe(userOf(0).id);
    expect((await logout(jar)).body).toEqual({ success: true });
    expect(jar.cookie).toBe("");
    const res = await me(jar);
    expect(res.status).toBe(401);
  });

  it("signing in again to an account in the browser replaces its older session, which ends", async () => {
    const jar = new Jar();
    const first = await login(jar, userOf(2));
    await login(jar, userOf(3));
    const second = await login(jar, userOf(2));
    expect(first).not.toBe(second);
    const old = await request(app.url, "/api/auth/me", { headers: { authorization: `Bearer ${first}` } });
    expect(old.status).toBe(401);
    const { accounts } = await list(jar);
    expect(accounts.map((a) => [a.userId, a.active])).toEqual([
      [userOf(2).id, true],
      [userOf(3).id, false],
    ]);
  });

  it("the same user id on another site is another account", async () => {
    const jar = new Jar();
    await login(jar, userOf(4));
    await login(jar, userOf(4), otherSiteId);
    const { accounts } = await list(jar);
    expect(accounts.map((a) => [a.site.name, a.userId])).toEqual([
      ["乙站", userOf(4).id],
      ["甲站", userOf(4).id],
    ]);
  });

  it("keeps 20 accounts: the 21st sign-in ends the least recently used, and the cookie stays under 4 KB", async () => {
    const jar = new Jar();
    const tokens: string[] = [];
    for (let i = 0; i < 21; i++) tokens.push(await login(jar, userOf(i)));
    expect(jar.cookie.length).toBeLessThan(4096);
    const { accounts } = await list(jar);
    expect(accounts).toHaveLength(20);
    expect(accounts[0]).toMatchObject({ userId: userOf(20).id, active: true });
    expect(accounts.map((a) => a.userId)).not.toContain(userOf(0).id);
    // The evicted account's session is over; the others live.
    expect((await request(app.url, "/api/auth/me", { headers: { authorization: `Bearer ${tokens[0]}` } })).status).toBe(
      401,
    );
    expect((await request(app.url, "/api/auth/me", { headers: { authorization: `Bearer ${tokens[1]}` } })).status).toBe(
      200,
    );
    // Using an account makes it the most recently used: switching to the oldest saves it from the next eviction.
    const oldest = accounts[19]!;
    expect(oldest.userId).toBe(userOf(1).id);
    await trpc(jar, "account.switch", { key: oldest.key });
    await login(jar, userOf(21));
    const after = (await list(jar)).accounts.map((a) => a.userId);
    expect(after).toContain(userOf(1).id);
    expect(after).not.toContain(userOf(2).id);
  });
});

describe("account procedures", () => {
  it("lists every account with an opaque key that is not a token, the active first", async () => {
    const jar = new Jar();
    const a = await login(jar, userOf(5));
    const b = await login(jar, userOf(6));
    const { accounts, dropped } = await list(jar);
    expect(dropped).toEqual([]);
    expect(accounts.map((x) => [x.userId, x.username, x.active, x.site.name])).toEqual([
      [userOf(6).id, `u${userOf(6).id}`, true, "甲站"],
      [userOf(5).id, `u${userOf(5).id}`, false, "甲站"],
    ]);
    for (const x of accounts) {
      expect(x.key).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect([a, b].some((t) => t.includes(x.key) || x.key.includes(t))).toBe(false);
    }
  });

  it("switches the active account; me and session control follow it", async () => {
    const jar = new Jar();
    await login(jar, userOf(7));
    await login(jar, userOf(8));
    const target = (await list(jar)).accounts.find((x) => x.userId === userOf(7).id)!;
    const res = await trpc(jar, "account.switch", { key: target.key });
    expect(res.data).toEqual({ success: true });
    expect(await meId(jar)).toBe(userOf(7).id);
    const sessions = await trpc<{ current: boolean }[]>(jar, "session.list");
    expect(sessions.status).toBe(200);
  });

  it("refuses a key of another browser, or a made-up one, and changes nothing", async () => {
    const mine = new Jar();
    const theirs = new Jar();
    await login(mine, userOf(9));
    await login(theirs, userOf(10));
    const foreign = (await list(theirs)).accounts[0]!.key;
    for (const key of [foreign, "A".repeat(22)]) {
      const res = await trpc(mine, "account.switch", { key });
      expect(res.status).toBe(404);
      expect(res.error).toBe("账户不存在或已退出，请刷新后重试");
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    expect(await meId(mine)).toBe(userOf(9).id);
    expect(await meId(theirs)).toBe(userOf(10).id);
    const bad = await trpc(mine, "account.switch", { key: "not a key" });
    expect(bad.status).toBe(400);
  });

  it("signs one account out (its session ends), then all of them", async () => {
    const jar = new Jar();
    const t11 = await login(jar, userOf(11));
    const t12 = await login(jar, userOf(12));
    await login(jar, userOf(13));
    const key11 = (await list(jar)).accounts.find((x) => x.userId === userOf(11).id)!.key;
    expect((await trpc(jar, "account.signOut", { key: key11 })).data).toMatchObject({ success: true });
    expect((await request(app.url, "/api/auth/me", { headers: { authorization: `Bearer ${t11}` } })).status).toBe(401);
    expect(await meId(jar)).toBe(userOf(13).id);
    expect((await list(jar)).accounts.map((x) => x.userId)).toEqual([userOf(13).id, userOf(12).id]);

    expect((await trpc(jar, "account.signOutAll")).data).toEqual({ success: true, ended: 2 });
    expect(jar.cookie).toBe("");
    expect((await request(app.url, "/api/auth/me", { headers: { authorization: `Bearer ${t12}` } })).status).toBe(401);
  });

  it("drops an account whose session ended elsewhere, and says which, once", async () => {
    const jar = new Jar();
    await login(jar, userOf(14), otherSiteId);
    const elsewhere = await login(jar, userOf(15));
    await login(jar, userOf(16));
    // The session of the 15th account is ended from another client.
    await request(app.url, "/api/auth/logout", { method: "POST", headers: { authorization: `Bearer ${elsewhere}` } });
    const first = await list(jar);
    expect(first.accounts.map((x) => x.userId)).toEqual([userOf(16).id, userOf(14).id]);
    expect(first.dropped).toEqual([{ siteId, siteName: "甲站", userId: userOf(15).id }]);
    expect((await list(jar)).dropped).toEqual([]);
  });

  it("when the active account's session ended elsewhere, the next most recently used answers", async () => {
    const jar = new Jar();
    await login(jar, userOf(17));
    const active = await login(jar, userOf(18));
    await request(app.url, "/api/auth/logout", { method: "POST", headers: { authorization: `Bearer ${active}` } });
    expect(await meId(jar)).toBe(userOf(17).id);
    const { dropped } = await list(jar);
    expect(dropped).toEqual([{ siteId, siteName: "甲站", userId: userOf(18).id }]);
  });

  it("with a Bearer token there is one account, and nothing to switch", async () => {
    const token = await login(new Jar(), userOf(19));
    const auth = { authorization: `Bearer ${token}` };
    const res = await trpc<ListAnswer>(auth, "account.list");
    expect(res.data?.accounts.map((x) => [x.userId, x.active])).toEqual([[userOf(19).id, true]]);
    const sw = await trpc(auth, "account.switch", { key: res.data!.accounts[0]!.key });
    expect(sw.status).toBe(400);
  });
});
