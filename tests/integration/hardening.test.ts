import fc from "fast-check";
import { sealData } from "iron-session";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveRequest } from "../../src/server/core/live-load";
import { purgeExpiredSessions } from "../../src/server/jobs/purge";
import { parsePasswords, passwords, setPasswords } from "../../src/server/session/passwords";
import { unseal } from "../../src/server/session/seal";
import { hashToken, sessionStore } from "../../src/server/session/store";
import { bearer, callerFor, signInWith } from "../support/caller";
import { ALICE, BOB, CAROL, FAULT } from "../support/gateway";
import { startFixture, type Fixture } from "../support/suite";

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(() => fx.close());

const TIMEOUT_MS = 1500;

const caller = (headers: Record<string, string> = {}) => callerFor(fx.store.db, headers, { timeoutMs: TIMEOUT_MS });
const signIn = (user: { id: number | string; token: string } = ALICE, siteId = fx.sites.legacy) =>
  signInWith(fx.store.db, siteId, user);

/** The access token a session keeps, unsealed with the passwords configured now; null when it can no longer be. */
async function storedAccessToken(token: string): Promise<string | null> {
  const row = await fx.store.db.session.findUnique({ where: { id: hashToken(token) }, select: { accessToken: true } });
  const data = row ? await unseal<{ accessToken: string }>(row.accessToken, 0) : null;
  return data?.accessToken ?? null;
}

/** Every message a login failure may carry: the contract's, docs/design.md's, and a site's own. */
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
    const token = fc.oneof(
      fc.constantFrom("sk-nope", "", FAULT.noMessage, FAULT.stringData),
      fc.string(),
      fc.jsonValue(),
    );
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
    [FAULT.redirectLoop, "无法连接站点: 站点返回了重定向"],
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
      const result = await caller().api.auth.login({
        userId: ALICE.id,
        accessToken: FAULT.huge,
        siteId: fx.sites.legacy,
      });
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
    await expect(caller(bearer(a.token)).api.session.revoke({ id: hashToken(bob.token) })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    expect((await caller(bearer(bob.token)).api.auth.me()).success).toBe(true);
    expect(await caller(bearer(a.token)).api.session.revoke({ id: hashToken(b.token) })).toEqual({ success: true });
    await expect(caller(bearer(b.token)).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect((await caller(bearer(a.token)).api.auth.me()).success).toBe(true);
  });

  it("signs out everywhere else and keeps this session", async () => {
    const keep = await signIn(ALICE, fx.sites.strict);
    const others = [await signIn(ALICE, fx.sites.strict), await signIn(ALICE, fx.sites.strict)];
    const elsewhere = await signIn(ALICE, fx.sites.legacy);
    const listed = await caller(bearer(keep.token)).api.session.list();
    expect(listed.map((s) => s.id)).toEqual(expect.arrayContaining(others.map((o) => hashToken(o.token))));
    const result = await caller(bearer(keep.token)).api.session.revokeOthers();
    expect(result).toEqual({ success: true, ended: listed.length - 1 });
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
    expect(await caller({ cookie: keep.cookie, origin: "http://localhost" }).api.auth.logout()).toEqual({
      success: true,
    });
  });
});

describe("expired sessions", () => {
  it("are purged in bounded batches, live ones kept", async () => {
    const live = await signIn();
    const past = new Date(Date.now() - 1000);
    const rows = Array.from({ length: 10_500 }, (_, i) => ({
      id: `expired-${i}`,
      userId: "1",
      siteUserId: 1,
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
    // While someone is served, a run takes one batch and leaves the rest for a quiet moment.
    const answered = liveRequest();
    try {
      expect(await purgeExpiredSessions(store)).toBe(500);
    } finally {
      answered();
    }
    await new Promise((r) => setTimeout(r, 1_050));
    expect(await purgeExpiredSessions(store)).toBe(10_000); // one run's bound
    expect(await fx.store.db.session.count({ where: { expiresAt: { lte: new Date() } } })).toBe(0);
    expect((await caller(bearer(live.token)).api.auth.me()).success).toBe(true);
  });
});

describe("key rotation", () => {
  const P1 = "first-password-0123456789-abcdefghijklmnop";
  const P2 = "second-password-0123456789-abcdefghijklmno";
  const original = passwords();
  afterAll(() => setPasswords(original));

  it("keeps old cookies and stored access tokens working until their password is removed", async () => {
    setPasswords(parsePasswords(P1));
    const old = await signIn();
    setPasswords(parsePasswords(JSON.stringify({ "2": P2, "1": P1 })));
    expect((await caller({ cookie: old.cookie }).api.auth.me()).success).toBe(true);
    expect(await storedAccessToken(old.token)).toBe(ALICE.token);
    const fresh = await signIn();
    expect(fresh.cookie).toMatch(/^gd_session=Fe26\.2\*2\d{9}\*/);
    const row = await fx.store.db.session.findUnique({ where: { id: hashToken(fresh.token) } });
    expect(row?.accessToken).toMatch(/^Fe26\.2\*2\d{9}\*/);

    setPasswords(parsePasswords(JSON.stringify({ "2": P2 })));
    await expect(caller({ cookie: old.cookie }).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(caller(bearer(old.token)).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(await storedAccessToken(old.token)).toBeNull();
    expect((await caller({ cookie: fresh.cookie }).api.auth.me()).success).toBe(true);
  });

  it("refuses a cookie sealed by another deployment's password", async () => {
    const { token } = await signIn();
    const forged = await sealData({ token }, { password: "another-deployment-password-0123456789", ttl: 3600 });
    await expect(caller({ cookie: `gd_session=${forged}` }).api.auth.me()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
  });
});

describe("one account, however its id is spelled", () => {
  it('lists and ends every session of user 104 made with 104, "0104", "104.0", "0x68" or "1.04e2"', async () => {
    const spellings = [CAROL.id, "0104", "104.0", "0x68", "1.04e2"];
    const sessions = [];
    for (const userId of spellings) sessions.push(await signIn({ id: userId, token: CAROL.token }));
    const [keep, ...others] = sessions as [(typeof sessions)[0], ...typeof sessions];
    const listed = (await caller(bearer(keep.token)).api.session.list()).map((s) => s.id);
    for (const s of sessions) expect(listed).toContain(hashToken(s.token));
    // The spelling as received stays in user_id, as the contract has it.
    const row = await fx.store.db.session.findUnique({ where: { id: hashToken(others[1]?.token ?? "") } });
    expect(row?.userId).toBe('"104.0"');

    expect(await caller(bearer(keep.token)).api.session.revokeOthers()).toEqual({
      success: true,
      ended: others.length,
    });
    for (const o of others) {
      await expect(caller(bearer(o.token)).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    }
    expect((await caller(bearer(keep.token)).api.auth.me()).success).toBe(true);
  });
});

describe("the dashboard's own sign-in", () => {
  it("sets the cookie and answers without the session token", async () => {
    const { api, ctx } = caller();
    const result = await api.auth.signIn({ userId: ALICE.id, accessToken: ALICE.token, siteId: fx.sites.legacy });
    expect(result.success).toBe(true);
    expect(Object.keys((result as { data: object }).data).sort()).toEqual(["site", "userInfo"]);
    expect(JSON.stringify(result)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-4/);
    const cookie = (ctx.resHeaders.get("set-cookie") ?? "").split(";")[0] ?? "";
    expect((await caller({ cookie }).api.auth.me()).success).toBe(true);
  });
});

describe("a password replaced under the same id", () => {
  const original = passwords();
  afterAll(() => setPasswords(original));

  it("ends every session it sealed, Bearer ones too", async () => {
    setPasswords(parsePasswords("leaked-password-0123456789-abcdefghijklmn"));
    const before = await signIn();
    setPasswords(parsePasswords("replacement-password-0123456789-abcdefghij"));
    await expect(caller(bearer(before.token)).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(caller({ cookie: before.cookie }).api.auth.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(await storedAccessToken(before.token)).toBeNull();
    const after = await signIn();
    expect((await caller(bearer(after.token)).api.auth.me()).success).toBe(true);
  });
});
