import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/server/session/store";
import { loginFailureCases, loginSuccessCases } from "../support/cases";
import { ALICE, BOB } from "../support/gateway";
import { startApp, type RunningApp } from "../support/server";
import { startFixture, type Fixture } from "../support/suite";
import { signInOverHttp } from "../support/http";

let fx: Fixture;
let app: RunningApp;

beforeAll(async () => {
  fx = await startFixture();
  app = await startApp({ DATABASE_URL: fx.store.url, DATA_DIR: fx.store.dir, SITE_TIMEOUT_MS: "1000" });
});
afterAll(async () => {
  await app?.stop();
  await fx?.close();
});

type Answer = { status: number; headers: Headers; body: Record<string, unknown> };

async function call(path: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(`${app.url}${path}`, init);
  const text = await res.text();
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> };
}

const post = (path: string, body: string, headers: Record<string, string> = {}) =>
  call(path, { method: "POST", body, headers: { "content-type": "application/json", ...headers } });
const login = (body: unknown) => post("/api/auth/login", JSON.stringify(body));
const me = (headers: Record<string, string>) => call("/api/auth/me", { headers });
const logout = (headers: Record<string, string>) => call("/api/auth/logout", { method: "POST", headers });

const signIn = (body: unknown) => signInOverHttp(app.url, body);

describe("POST /api/auth/login over HTTP", () => {
  for (const c of loginFailureCases) {
    it(`answers HTTP 200 ${c.message} for ${c.name}`, async () => {
      const before = await fx.store.db.session.count();
      const res = await login(c.body(fx.sites));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: false, message: c.message });
      expect(res.headers.get("set-cookie")).toBeNull();
      expect(await fx.store.db.session.count()).toBe(before);
    });
  }

  for (const c of loginSuccessCases) {
    it(`signs in with ${c.name}`, async () => {
      const res = await login(c.body(fx.sites));
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      const data = res.body.data as { sessionToken: string; userInfo: { id: number }; site: object };
      expect(Object.keys(data).sort()).toEqual(["sessionToken", "site", "userInfo"]);
      expect(data.userInfo.id).toBe(Number(c.userId));
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.headers.get("set-cookie")).toMatch(/^gd_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    });
  }

  it("answers a body that is not JSON", async () => {
    for (const body of ["", "{", "userId=1&siteId=2", "\u0000"]) {
      const res = await post("/api/auth/login", body);
      expect(res).toMatchObject({ status: 200, body: { success: false, message: "请求体必须是 JSON 对象" } });
    }
  });

  it("answers HTTP 413 to a body over 64 KiB, declared or streamed", async () => {
    const big = JSON.stringify({ userId: 1, accessToken: "x".repeat(70 * 1024), siteId: 1 });
    const declared = await post("/api/auth/login", big);
    expect(declared).toMatchObject({ status: 413, body: { success: false, message: "请求体过大" } });
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const streamed = await call("/api/auth/login", {
      method: "POST",
      body: stream,
      headers: { "content-type": "application/json" },
      duplex: "half",
    } as RequestInit);
    expect(streamed).toMatchObject({ status: 413, body: { success: false, message: "请求体过大" } });
  });

  it("accepts a body just under 64 KiB", async () => {
    const body = JSON.stringify({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.legacy, pad: "" });
    const padded = body.replace('"pad":""', `"pad":"${"x".repeat(64 * 1024 - body.length)}"`);
    expect(Buffer.byteLength(padded)).toBe(64 * 1024);
    const res = await post("/api/auth/login", padded);
    expect(res.body.success).toBe(true);
  });
});

describe("the session check over HTTP", () => {
  it("answers 401 with the contract's body for a missing, malformed, unknown or stored-id token", async () => {
    const { token } = await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.strict });
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer " },
      { authorization: "Bearer nonsense" },
      { authorization: `Bearer ${crypto.randomUUID()}` },
      { authorization: `Bearer ${hashToken(token)}` },
      { authorization: token }, // the scheme is required
      { cookie: "gd_session=Fe26.2*1*forged" },
    ];
    for (const headers of attempts) {
      for (const res of [await me(headers), await logout(headers)]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ success: false, message: "未登录或登录已过期" });
      }
    }
  });

  it("answers 401 for an expired session and removes its row", async () => {
    const { token } = await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.strict });
    const id = hashToken(token);
    await fx.store.db.session.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1) } });
    expect((await me({ authorization: `Bearer ${token}` })).status).toBe(401);
    expect(await fx.store.db.session.findUnique({ where: { id } })).toBeNull();
  });
});

describe("GET /api/auth/me and POST /api/auth/logout over HTTP", () => {
  it("serves me by Bearer and by cookie, then logout by cookie ends both", async () => {
    const { token, cookie } = await signIn({ userId: BOB.id, accessToken: BOB.token, siteId: fx.sites.strict });
    const ways: Record<string, string>[] = [{ authorization: `Bearer ${token}` }, { cookie }];
    for (const headers of ways) {
      const res = await me(headers);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("no-store");
      expect(res.body).toMatchObject({
        success: true,
        data: { userInfo: { id: BOB.id }, site: { id: fx.sites.strict } },
      });
    }
    const out = await logout({ cookie });
    expect(out).toMatchObject({ status: 200, body: { success: true } });
    expect(out.headers.get("set-cookie")).toMatch(/^gd_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
    expect((await me({ authorization: `Bearer ${token}` })).status).toBe(401);
    expect((await me({ cookie })).status).toBe(401);
  });

  it("logout by Bearer answers exactly {success:true}", async () => {
    const { token } = await signIn({ userId: BOB.id, accessToken: BOB.token, siteId: fx.sites.legacy });
    const out = await logout({ authorization: `Bearer ${token}` });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true });
  });

  it("shows a renamed site and omits a removed one", async () => {
    const site = await fx.store.db.site.create({ data: { name: "临时站点", url: fx.legacy.url } });
    const { token } = await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: site.id });
    const auth = { authorization: `Bearer ${token}` };
    await fx.store.db.site.update({ where: { id: site.id }, data: { name: "新名字" } });
    expect((await me(auth)).body).toMatchObject({
      data: { site: { id: site.id, name: "新名字", url: fx.legacy.url } },
    });
    await fx.store.db.site.delete({ where: { id: site.id } });
    const after = await me(auth);
    expect(after.status).toBe(200);
    expect(Object.keys(after.body.data as object)).toEqual(["userInfo"]);
  });

  it("asks search engines to index nothing (robots.txt)", async () => {
    const res = await fetch(`${app.url}/robots.txt`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("User-agent: *\nDisallow: /\n");
  });

  it("answers a browser's own /favicon.ico with the icon, not a 404", async () => {
    const [ico, icon] = await Promise.all([fetch(`${app.url}/favicon.ico`), fetch(`${app.url}/icon.svg`)]);
    expect([ico.status, ico.headers.get("content-type")]).toEqual([200, "image/svg+xml"]);
    expect(await ico.text()).toBe(await icon.text());
  });

  it("never prints a token, an access token or a cookie in the server output", async () => {
    const { token, cookie } = await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.strict });
    await me({ cookie });
    await logout({ authorization: `Bearer ${token}` });
    const out = app.output();
    for (const secret of [token, ALICE.token, BOB.token, cookie.split("=")[1] ?? "x"]) {
      expect(out).not.toContain(secret);
    }
  });
});
