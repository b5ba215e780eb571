import fc from "fast-check";
import { sealData } from "iron-session";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createContextInner } from "../../src/server/api/context";
import { createCaller } from "../../src/server/api/root";
import { forgetUnsealedCookies } from "../../src/server/session/cookie";
import { parsePasswords, passwords, setPasswords } from "../../src/server/session/keys";
import { purgeExpiredSessions } from "../../src/server/session/purger";
import { hashToken, sessionStore } from "../../src/server/session/store";
import { ALICE, BOB, FAULT } from "../support/gateway";
import { startFixture, type Fixture } from "../support/suite";

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(() => fx.close());

const TIMEOUT_MS = 1500;

function caller(headers: Record<string, string> = {}) {
  const ctx = createContextInner({ db: fx.store.db, headers: new Headers(headers), timeoutMs: TIMEOUT_MS });
  return { api: createCaller(ctx), ctx };
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function signIn(user = ALICE, siteId = fx.sites.legacy) {
  const { api, ctx } = caller();
  const result = await api.auth.login({ userId: user.id, accessToken: user.token, siteId });
  if (!result.success) throw new Error(result.message);
  return { token: result.data.sessionToken, cookie: (ctx.resHeaders.get("set-cookie") ?? "").split(";")[0] ?? "" };
}

/** Every message a login failure may carry: the contract's, design.md's, and a site's own. */
const KNOWN = new Set([
  "请求体必须是 JSON 对象",
  "请填写完整信息",
  "站点不存在",
  "认证失败，请检查用户ID和令牌",
  "用户ID与令牌不匹配",
  "无权进行此操作，access token 无效",
  "无权进行此操作，New-Api-User 与登录用户不匹配",
  "无权进行此操作，New-Api-User 格式错误",
  "无权进行此操作，未提供 New-Api-User",
  "无权进行此操作，未登录且未提供 access token",
  "用户已被封禁",
  "数据库出错，请联系管理员",
]);

describe("property: any login body", () => {
  it("answers a JSON envelope with a known message and leaves no session behind", async () => {
    const siteId = fc.oneof(
      fc.constantFrom(fx.sites.strict, fx.sites.legacy, String(fx.sites.legacy), 0, -1, 9999, "1e3"),
      fc.jsonValue(),
    );
    const userId = fc.oneof(fc.constantFrom(ALICE.id, String(BOB.id), 0, "", "abc"), fc.jsonValue());
    const token = fc.oneof(fc.constantFrom("sk-nope", "", FAULT.noMessage, FAULT.stringData), fc.string(), fc.jsonValue());
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record({ userId, accessToken: token, siteId }, { requiredKeys: [] }),
      fc.record({ userId, accessToken: token, siteId, extra: fc.jsonValue() }),
    );
    const before = await fx.store.db.session.count();
    await fc.assert(
      fc.asyncProperty(body, async (b) => {
        const result: unknown = await caller().api.auth.login(b as never);
        expect(JSON.parse(JSON.stringify(result))).toEqual(result);
        const r = result as { success: boolean; message?: string };
        expect(r.success).toBe(false);
        const known = KNOWN.has(r.message ?? "") || (r.message ?? "").startsWith("无法连接站点: ");
        expect(known, r.message).toBe(true);
      }),
      { numRuns: 300 },
    );
    expect(await fx.store.db.session.count()).toBe(before);
  });
});

describe("gateway faults", () => {
  it.each([
    [FAULT.hang, "无法连接站点: 连接超时"],
    [FAULT.drip, "无法连接站点: 连接超时"],
    [FAULT.reset, "无法连接站点: 连接被重置"],
    [FAULT.huge, "无法连接站点: 响应过大"],
    [FAULT.html, "无法连接站点: 站点返回的不是 JSON（HTTP 200）"],
    [FAULT.dbError, "数据库出错，请联系管理员"],
    [FAULT.redirectLoop, "无法连接站点: 重定向次数过多"],
  ])("%s answers %s within the timeout", async (token, message) => {
    const started = Date.now();
    const result = await caller().api.auth.login({ userId: ALICE.id, accessToken: token, siteId: fx.sites.legacy });
    expect(result).toEqual({ success: false, message });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 500);
  });

  it("keeps memory flat through repeated 64 MB answers", async () => {
    global.gc?.();
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 5; i++) {
      const result = await caller().api.auth.login({ userId: ALICE.id, accessToken: FAULT.huge, siteId: fx.sites.legacy });
      expect(result).toEqual({ success: false, message: "无法连接站点: 响应过大" });
    }
    global.gc?.();
    expect(process.memoryUsage().rss - before).toBeLessThan(48 * 1024 * 1024);
  });
});

describe("session control", () => {
  it("lists my sessions on this site, marks this one, and shows no token", async () => {
    const a = await signIn();
    const b = await signIn();
    await signIn(ALICE, fx.sites.strict); // same user, another site: not listed
    await signIn(BOB); // another user: not listed
    const list = await caller(bearer(a.token)).api.session.list();
    const ids = list.map((s) => s.id);
    expect(ids).toContain(hashToken(a.token));
    expect(ids).toContain(hashToken(b.token));
    expect(list.filter((s) => s.current).map((s) => s.id)).toEqual([hashToken(a.token)]);
    const rows = await fx.store.db.session.findMany({ where: { id: { in: ids } } });
    expect(rows.every((r) => r.siteId === fx.sites.legacy && JSON.parse(r.userId) === ALICE.id)).toBe(true);
    const text = JSON.stringify(list);
    expect(text).not.toContain(a.token);
    expect(text).not.toContain(b.token);
    expect(Object.keys(list[0] ?? {}).sort()).toEqual(["createdAt", "current", "expiresAt", "id"]);
  });

  it("ends one session, effective on its next request; never another user's", async () => {
    const a = await signIn();
    const b = await signIn();
    const bob = await signIn(BOB);
    await expect(
      caller(bearer(a.token)).api.session.revoke({ id: hashToken(bob.token) }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect((await caller(bearer(bob.token)).api.auth.me()).success).toBe(true);
    expect(await caller(bearer(a.token)).api.session.revoke({ id: hashToken(b.token) })).toEqual({ success: true });
    await expect(caller(bearer(b.token)).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect((await caller(bearer(a.token)).api.auth.me()).success).toBe(true);
  });

  it("signs out everywhere else and keeps this session", async () => {
    const keep = await signIn(ALICE, fx.sites.strict);
    const others = [await signIn(ALICE, fx.sites.strict), await signIn(ALICE, fx.sites.strict)];
    const elsewhere = await signIn(ALICE, fx.sites.legacy);
    const result = await caller(bearer(keep.token)).api.session.revokeOthers();
    expect(result.success).toBe(true);
    expect(result.ended).toBeGreaterThanOrEqual(2);
    for (const o of others) {
      await expect(caller(bearer(o.token)).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    }
    expect((await caller(bearer(keep.token)).api.auth.me()).success).toBe(true);
    expect((await caller(bearer(elsewhere.token)).api.auth.me()).success).toBe(true);
  });

  it("refuses cross-origin cookie mutations with 非法的请求来源 and changes nothing", async () => {
    const keep = await signIn(BOB, fx.sites.strict);
    const other = await signIn(BOB, fx.sites.strict);
    const evil = { cookie: keep.cookie, origin: "http://evil.example" };
    for (const call of [
      () => caller(evil).api.auth.logout(),
      () => caller(evil).api.session.revokeOthers(),
      () => caller(evil).api.session.revoke({ id: hashToken(other.token) }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: "FORBIDDEN", message: "非法的请求来源" });
    }
    expect((await caller(bearer(other.token)).api.auth.me()).success).toBe(true);
    expect((await caller({ cookie: keep.cookie }).api.auth.me()).success).toBe(true);
    // Queries are not state-changing; Bearer requests carry no ambient credential.
    expect((await caller(evil).api.auth.me()).success).toBe(true);
    expect(await caller({ ...bearer(other.token), origin: "http://evil.example" }).api.auth.logout()).toEqual({
      success: true,
    });
    // Same origin is fine.
    expect(await caller({ cookie: keep.cookie, origin: "http://localhost" }).api.auth.logout()).toEqual({ success: true });
  });
});

describe("expired sessions", () => {
  it("are purged in bounded batches, live ones kept", async () => {
    const live = await signIn();
    const past = new Date(Date.now() - 1000);
    const rows = Array.from({ length: 10_500 }, (_, i) => ({
      id: `expired-${i}`,
      userId: "1",
      accessToken: "x",
      siteId: fx.sites.legacy,
      siteUrl: "http://x",
      userInfo: "{}",
      createdAt: past,
      expiresAt: past,
    }));
    for (let i = 0; i < rows.length; i += 2000) {
      await fx.store.db.session.createMany({ data: rows.slice(i, i + 2000) });
    }
    const store = sessionStore(fx.store.db);
    expect(await purgeExpiredSessions(store)).toBe(10_000); // one run's bound
    expect(await purgeExpiredSessions(store)).toBe(500);
    expect(await fx.store.db.session.count({ where: { expiresAt: { lte: new Date() } } })).toBe(0);
    expect((await caller(bearer(live.token)).api.auth.me()).success).toBe(true);
  });
});

describe("key rotation", () => {
  const P1 = "first-password-0123456789-abcdefghijklmnop";
  const P2 = "second-password-0123456789-abcdefghijklmno";
  const original = passwords();
  afterAll(() => {
    setPasswords(original);
    forgetUnsealedCookies();
  });

  it("keeps old cookies and stored access tokens working until their password is removed", async () => {
    setPasswords(parsePasswords(P1));
    const old = await signIn();
    const store = sessionStore(fx.store.db);
    setPasswords(parsePasswords(JSON.stringify({ "2": P2, "1": P1 })));
    forgetUnsealedCookies();
    expect((await caller({ cookie: old.cookie }).api.auth.me()).success).toBe(true);
    expect(await store.accessToken(hashToken(old.token))).toBe(ALICE.token);
    const fresh = await signIn();
    expect(fresh.cookie).toMatch(/^gd_session=Fe26\.2\*2\*/);
    const row = await fx.store.db.session.findUnique({ where: { id: hashToken(fresh.token) } });
    expect(row?.accessToken).toMatch(/^Fe26\.2\*2\*/);

    setPasswords(parsePasswords(JSON.stringify({ "2": P2 })));
    forgetUnsealedCookies();
    await expect(caller({ cookie: old.cookie }).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(caller(bearer(old.token)).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(await store.accessToken(hashToken(old.token))).toBeNull();
    expect((await caller({ cookie: fresh.cookie }).api.auth.me()).success).toBe(true);
  });

  it("refuses a cookie sealed by another deployment's password", async () => {
    const { token } = await signIn();
    const forged = await sealData({ token }, { password: "another-deployment-password-0123456789", ttl: 3600 });
    await expect(caller({ cookie: `gd_session=${forged}` }).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });
});
