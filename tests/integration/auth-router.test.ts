import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { USER_ID_HEADERS } from "../../src/server/gateway/client";
import { unseal } from "../../src/server/session/seal";
import { hashToken } from "../../src/server/session/store";
import { bearer, callerFor } from "../support/caller";
import { loginFailureCases, loginSuccessCases } from "../support/cases";
import { ALICE, BOB } from "../support/gateway";
import { startFixture, type Fixture } from "../support/suite";

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(() => fx.close());

const caller = (headers: Record<string, string> = {}) => callerFor(fx.store.db, headers, { timeoutMs: 500 });

async function signIn(body: unknown) {
  const result = await caller().api.auth.login(body as never);
  if (!result.success) throw new Error(`login failed: ${result.message}`);
  return result.data;
}

describe("auth.login through createCaller", () => {
  for (const c of loginFailureCases) {
    it(`answers ${c.message} for ${c.name}`, async () => {
      const sessionsBefore = await fx.store.db.session.count();
      const callsBefore = fx.gatewayCalls();
      const result = await caller().api.auth.login(c.body(fx.sites) as never);
      expect(result).toEqual({ success: false, message: c.message });
      expect(await fx.store.db.session.count()).toBe(sessionsBefore);
      if (c.siteNotCalled) expect(fx.gatewayCalls()).toBe(callsBefore);
    });
  }

  for (const c of loginSuccessCases) {
    it(`signs in with ${c.name}`, async () => {
      const { api, ctx } = caller();
      const result = await api.auth.login(c.body(fx.sites) as never);
      expect(result.success).toBe(true);
      if (!result.success) return;
      expect(result.data.sessionToken).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(result.data.userInfo.id).toBe(Number(c.userId));
      expect(Object.keys(result.data.site).sort()).toEqual(["id", "name", "url"]);
      expect(ctx.resHeaders.get("set-cookie")).toMatch(
        /^gd_session=Fe26\.2\*.*; Path=\/; HttpOnly; SameSite=Lax; Max-Age=86[34]\d\d/,
      );
      expect(ctx.resHeaders.get("cache-control")).toBe("no-store");
      const me = await caller(bearer(result.data.sessionToken)).api.auth.me();
      expect(me.data.userInfo.id).toBe(Number(c.userId));
    });
  }

  it("sends the token verbatim, the user id in every family header, and a default language", async () => {
    const before = fx.strict.requests.length;
    await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.strict });
    const req = fx.strict.requests[before];
    expect(req?.method).toBe("GET");
    expect(req?.path).toBe("/api/user/self");
    expect(req?.headers.authorization).toBe(ALICE.token);
    for (const name of USER_ID_HEADERS) expect(req?.headers[name.toLowerCase()]).toBe(String(ALICE.id));
    expect(req?.headers.accept).toBe("application/json");
    expect(req?.headers["accept-language"]).toBe("zh-CN");
  });

  it("forwards the caller's Accept-Language", async () => {
    const before = fx.legacy.requests.length;
    await caller({ "accept-language": "en-US,en;q=0.8" }).api.auth.login({
      userId: ALICE.id,
      accessToken: ALICE.token,
      siteId: fx.sites.legacy,
    });
    expect(fx.legacy.requests[before]?.headers["accept-language"]).toBe("en-US,en;q=0.8");
  });

  it("stores the session row as the contract describes, with secrets hashed, sealed or stripped", async () => {
    const t0 = Date.now();
    const data = await signIn({ userId: String(ALICE.id), accessToken: ALICE.token, siteId: fx.sites.strict });
    const row = await fx.store.db.session.findUnique({ where: { id: hashToken(data.sessionToken) } });
    expect(row).not.toBeNull();
    if (!row) return;
    expect(row.id).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.parse(row.userId)).toBe(String(ALICE.id)); // a string stays a string
    expect(row.siteId).toBe(fx.sites.strict);
    expect(row.siteUserId).toBe(BigInt(ALICE.id));
    expect(row.siteUrl).toBe(fx.strict.url);
    expect(row.accessToken).not.toContain(ALICE.token);
    expect(await unseal(row.accessToken, 0)).toEqual({ accessToken: ALICE.token });
    const info = JSON.parse(row.userInfo) as Record<string, unknown>;
    for (const secret of ["access_token", "password", "original_password", "verification_code"]) {
      expect(info).not.toHaveProperty(secret);
      expect(data.userInfo).not.toHaveProperty(secret);
    }
    expect(info.display_name).toBe("爱丽丝");
    const lifetime = row.expiresAt.getTime() - t0;
    expect(lifetime).toBeGreaterThanOrEqual(24 * 3600_000 - 1000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000 + 1000);
    // The stored row holds no trace of the session token itself.
    expect(JSON.stringify({ ...row, siteUserId: String(row.siteUserId) })).not.toContain(data.sessionToken);
  });

  it("keeps a numeric userId a number in the row", async () => {
    const data = await signIn({ userId: BOB.id, accessToken: BOB.token, siteId: fx.sites.legacy });
    const row = await fx.store.db.session.findUnique({ where: { id: hashToken(data.sessionToken) } });
    expect(row && JSON.parse(row.userId)).toBe(BOB.id);
  });
});

describe("the session check", () => {
  it("answers UNAUTHORIZED with the contract's message for no token, a malformed, an unknown token", async () => {
    for (const headers of [{}, bearer("not-a-uuid"), bearer(crypto.randomUUID()), { authorization: "Basic abc" }]) {
      await expect(caller(headers).api.auth.me()).rejects.toMatchObject({
        code: "UNAUTHORIZED",
        message: "未登录或登录已过期",
      });
    }
  });

  it("refuses a stored id used as a token", async () => {
    const data = await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.strict });
    await expect(caller(bearer(hashToken(data.sessionToken))).api.auth.me()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });

  it("rejects an expired session and deletes its row on that read", async () => {
    const data = await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.strict });
    const id = hashToken(data.sessionToken);
    await fx.store.db.session.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await expect(caller(bearer(data.sessionToken)).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(await fx.store.db.session.findUnique({ where: { id } })).toBeNull();
  });

  it("reads the session from the sealed cookie, and prefers Bearer when both are sent", async () => {
    const { api, ctx } = caller();
    const login = await api.auth.login({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.strict });
    const cookie = (ctx.resHeaders.get("set-cookie") ?? "").split(";")[0] ?? "";
    const me = await caller({ cookie }).api.auth.me();
    expect(me.data.userInfo.id).toBe(ALICE.id);
    expect(login.success && me.data.site?.id).toBe(fx.sites.strict);
    await expect(caller({ cookie, ...bearer(crypto.randomUUID()) }).api.auth.me()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    await expect(caller({ cookie: `${cookie.slice(0, -3)}xyz` }).api.auth.me()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });
});

describe("auth.me and auth.logout", () => {
  it("returns the login snapshot and the site as the registry has it now", async () => {
    const data = await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.legacy });
    const me = await caller(bearer(data.sessionToken)).api.auth.me();
    expect(me).toEqual({ success: true, data: { userInfo: data.userInfo, site: data.site } });

    await fx.store.db.site.update({ where: { id: fx.sites.legacy }, data: { name: "改名后的站点" } });
    const renamed = await caller(bearer(data.sessionToken)).api.auth.me();
    expect(renamed.data.site).toEqual({ id: fx.sites.legacy, name: "改名后的站点", url: fx.legacy.url });
  });

  it("omits site once the site is removed, and the session still works", async () => {
    const gone = await fx.store.db.site.create({ data: { name: "将被删除", url: fx.legacy.url } });
    const data = await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: gone.id });
    await fx.store.db.site.delete({ where: { id: gone.id } });
    const me = await caller(bearer(data.sessionToken)).api.auth.me();
    expect(me.success).toBe(true);
    expect(me.data).not.toHaveProperty("site");
    expect(JSON.parse(JSON.stringify(me))).toEqual({ success: true, data: { userInfo: data.userInfo } });
  });

  it("logout deletes the row, clears the cookie, and the token stops working", async () => {
    const data = await signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.strict });
    const { api, ctx } = caller(bearer(data.sessionToken));
    expect(await api.auth.logout()).toEqual({ success: true });
    expect(ctx.resHeaders.get("set-cookie")).toMatch(/^gd_session=; .*Max-Age=0/);
    expect(await fx.store.db.session.findUnique({ where: { id: hashToken(data.sessionToken) } })).toBeNull();
    await expect(caller(bearer(data.sessionToken)).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(caller(bearer(data.sessionToken)).api.auth.logout()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});

describe("site.list", () => {
  it("lists registered sites with id, name and url only", async () => {
    const sites = await caller().api.site.list();
    expect(sites.map((s) => s.id)).toEqual([fx.sites.strict, fx.sites.legacy, fx.sites.unreachable]);
    for (const s of sites) expect(Object.keys(s).sort()).toEqual(["id", "name", "url"]);
  });
});
