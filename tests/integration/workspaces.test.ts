import { parse } from "csv-parse/sync";
import { generate } from "otplib";
import { freshRateWindow } from "../support/http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import { demoHistory } from "../../src/demo/history";
import { freshProcessState } from "../../src/server/core/process-state";
import { setVaultKeys } from "../../src/server/session/vault";
import { setOperatorPassword } from "../../src/server/admin/operator";
import { siteRegistry } from "../../src/server/sites/registry";
import { renewSavedSessions } from "../../src/server/jobs/workspace";
import { resealSavedTokens } from "../../src/server/workspace/reseal";
import { signup } from "../../src/server/workspace/signup";
import { bearer, callerFor, cookieFrom } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/**
 * Workspaces in-process against two stand-in sites: creation and sign-in, saved accounts with
 * their sealed tokens, renewal from the saved token, 需要重新授权 and back, isolation between two
 * workspaces that saved the same site account, devices, API tokens, invites, key rotation.
 */

let store: TempDb;
let newApi: RunningGateway;
let oneHub: RunningGateway;
let siteA: number;
let siteB: number;

const user = (id: number, token: string): GatewayUser => ({
  accessToken: token,
  data: newApiUser(id, { username: `user${id}`, display_name: `用户${id}` }),
});
const ANN = user(501, "sk-ann-0123456789abcdef0123");
const BEN = user(502, "sk-ben-0123456789abcdef0123");
const CAT = user(503, "sk-cat-0123456789abcdef0123");

let address = 0;
/** A caller from its own address (the creation limit counts per address). */
const caller = (headers: Record<string, string> = {}, clientAddress = `198.51.100.${(address++ % 250) + 1}`) =>
  callerFor(store.db, headers, { timeoutMs: 2000, clientAddress });

async function register(name: string, password = "correct horse battery") {
  const result = await caller().api.workspace.register({ name, password });
  return result.data.token;
}

beforeAll(async () => {
  store = await tempStore();
  [newApi, oneHub] = await Promise.all([
    startGateway({ family: "new-api", users: [ANN, BEN, CAT], requireUserHeader: true, failureStatus: 401 }),
    startGateway({ family: "one-hub", users: [ANN, BEN, CAT] }),
  ]);
  siteA = (await siteRegistry(store.db).add({ name: "甲站", url: newApi.url })).id;
  siteB = (await siteRegistry(store.db).add({ name: "乙站", url: oneHub.url })).id;
});
afterAll(async () => {
  setVaultKeys(undefined);
  await Promise.all([newApi?.close(), oneHub?.close()]);
  await store?.cleanup();
});
beforeEach(() => {
  freshProcessState();
});

describe("creating a workspace and signing in", () => {
  it("answers a Bearer token and an HttpOnly cookie; the name is taken case-insensitively", async () => {
    const { api, ctx } = caller();
    const result = await api.workspace.register({ name: "  Alice的工作区 ", password: "correct horse battery" });
    expect(result.data.workspace.name).toBe("Alice的工作区");
    expect(result.data.token).toMatch(/^gdw_[A-Za-z0-9_-]{43}$/);
    expect(ctx.resHeaders.get("set-cookie")).toMatch(
      /^gd_workspace=gdw_[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=7776000$/,
    );
    expect(ctx.resHeaders.get("cache-control")).toBe("no-store");
    // Only the token's hash is stored.
    const rows = await store.db.workspaceSession.findMany({ select: { id: true } });
    expect(JSON.stringify(rows)).not.toContain(result.data.token);
    await expect(
      caller().api.workspace.register({ name: "alice的工作区", password: "another long password" }),
    ).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: "该工作区名称已被使用",
    });
    const me = await caller(bearer(result.data.token)).api.workspace.me();
    expect(me.data).toEqual({
      workspace: { id: result.data.workspace.id, name: "Alice的工作区", timeZone: "Asia/Shanghai" },
      access: "device",
      accounts: 0,
    });
  });

  it("refuses short passwords, bad names and wrong passwords in words", async () => {
    await expect(caller().api.workspace.register({ name: "短密码", password: "short" })).rejects.toMatchObject({
      message: "密码至少需要 12 个字符",
    });
    // Long enough, and nothing but blanks: no password at all.
    for (const blank of [" ".repeat(12), "\t".repeat(6) + "\u3000".repeat(6)]) {
      await expect(caller().api.workspace.register({ name: "空白密码", password: blank })).rejects.toMatchObject({
        message: "密码不能只有空格",
      });
    }
    await expect(
      caller().api.workspace.register({ name: "x", password: "correct horse battery" }),
    ).rejects.toMatchObject({
      message: "工作区名称需为 2 到 40 个字符，不含控制字符",
    });
    await register("登录测试");
    await expect(
      caller().api.workspace.login({ name: "登录测试", password: "wrong password!!" }),
    ).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "工作区名称或密码错误",
    });
    await expect(
      caller().api.workspace.login({ name: "没有这个", password: "correct horse battery" }),
    ).rejects.toMatchObject({
      message: "工作区名称或密码错误",
    });
    // The dashboard's own sign-in says it in words instead of a 401.
    expect(await caller().api.workspace.signIn({ name: "登录测试", password: "wrong password!!" })).toEqual({
      success: false,
      message: "工作区名称或密码错误",
    });
    const ok = await caller().api.workspace.login({ name: "登录测试", password: "correct horse battery" });
    expect(ok.data.token).toMatch(/^gdw_/);
  });

  it("limits sign-in attempts per address without locking the owner out from elsewhere", async () => {
    // The attempts are counted per clock minute: all of them within one.
    await freshRateWindow();
    await register("限流");
    const attacker = "203.0.113.66";
    const attempt = (addr: string, password: string) =>
      callerFor(store.db, {}, { clientAddress: addr, loginRateLimit: 3 }).api.workspace.login({
        name: "限流",
        password,
      });
    for (let i = 0; i < 3; i++)
      await expect(attempt(attacker, "wrong password!!")).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await expect(attempt(attacker, "correct horse battery")).rejects.toMatchObject({
      code: "TOO_MANY_REQUESTS",
      message: "登录尝试过于频繁，请稍后再试",
    });
    const owner = await attempt("192.0.2.10", "correct horse battery");
    expect(owner.success).toBe(true);
    // Creation attempts count per address too, answered or not.
    const create = () =>
      callerFor(store.db, {}, { clientAddress: "203.0.113.77", loginRateLimit: 2 }).api.workspace.register({
        name: "限流",
        password: "correct horse battery",
      });
    for (let i = 0; i < 2; i++) await expect(create()).rejects.toMatchObject({ message: "该工作区名称已被使用" });
    await expect(create()).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS" });
  });

  it("limits creations per address, and by invite code only when the operator says so", async () => {
    const from = "203.0.113.99";
    const create = (name: string, invite?: string) =>
      callerFor(store.db, {}, { clientAddress: from }).api.workspace.register({
        name,
        password: "correct horse battery",
        invite,
      });
    for (let i = 0; i < 3; i++) await create(`批量${i}`);
    await expect(create("批量3")).rejects.toMatchObject({
      code: "TOO_MANY_REQUESTS",
      message: "此地址创建工作区过于频繁，请一小时后再试",
    });

    await signup(store.db).setMode("invite");
    try {
      await expect(register("无邀请码")).rejects.toMatchObject({
        message: "本站只能凭邀请码创建工作区，请向管理员索取邀请码",
      });
      const { code } = await signup(store.db).createInvite("给小王");
      // A creation refused for its name gives the code back.
      await expect(
        caller().api.workspace.register({ name: "批量0", password: "correct horse battery", invite: code }),
      ).rejects.toMatchObject({ message: "该工作区名称已被使用" });
      // And one refused for its address's limit.
      await expect(create("凭邀请码", code)).rejects.toMatchObject({ code: "TOO_MANY_REQUESTS" });
      expect((await signup(store.db).invites())[0]?.state).toBe("open");
      const made = await caller().api.workspace.register({
        name: "凭邀请码",
        password: "correct horse battery",
        invite: code,
      });
      expect(made.success).toBe(true);
      await expect(
        caller().api.workspace.register({ name: "再用一次", password: "correct horse battery", invite: code }),
      ).rejects.toMatchObject({ message: "邀请码无效、已过期或已被使用" });
      expect((await signup(store.db).invites())[0]?.state).toBe("used");
    } finally {
      await signup(store.db).setMode("open");
    }
  });
});

describe("creations at once", () => {
  it("makes at most three workspaces an hour from one address, however many are sent together", async () => {
    const from = "203.0.113.211";
    const results = await Promise.allSettled(
      Array.from({ length: 15 }, (_, i) =>
        callerFor(store.db, {}, { clientAddress: from }).api.workspace.register({
          name: `并发${i}`,
          password: "correct horse battery",
        }),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    for (const r of refused) expect(r.reason).toMatchObject({ code: "TOO_MANY_REQUESTS" });
  });
});

describe("the operator's choice", () => {
  it("switches creation to invite codes in /admin, makes a code shown once, and audits both", async () => {
    await setOperatorPassword(store.db, "operator password 123");
    const login = await caller().api.admin.login({ password: "operator password 123" });
    const admin = caller(bearer(login.data.token)).api;
    await admin.admin.setSignup({ mode: "invite" });
    try {
      const made = await admin.admin.createInvite({ note: "给测试" });
      await expect(register("管理员邀请前")).rejects.toMatchObject({
        message: "本站只能凭邀请码创建工作区，请向管理员索取邀请码",
      });
      const withCode = await caller().api.workspace.register({
        name: "管理员邀请",
        password: "correct horse battery",
        invite: made.data.code,
      });
      expect(withCode.success).toBe(true);
      const view = await admin.admin.workspaces();
      expect(view.data.mode).toBe("invite");
      expect(view.data.invites[0]).toMatchObject({ note: "给测试", state: "used" });
      expect(JSON.stringify(view)).not.toContain(made.data.code);
      const log = await admin.admin.audit({ actions: ["signupMode", "inviteCreate"] });
      expect(log.data.entries.map((e) => e.action)).toEqual(["inviteCreate", "signupMode"]);
      expect(JSON.stringify(log)).not.toContain(made.data.code);
    } finally {
      await admin.admin.setSignup({ mode: "open" });
    }
  });
});

describe("saved accounts", () => {
  it("saves an account only after its site accepts the token, and never shows the token", async () => {
    const token = await register("保存账户");
    const api = caller(bearer(token)).api;
    const refused = await api.workspace.addAccount({
      siteId: siteA,
      userId: ANN.data.id as number,
      accessToken: "sk-wrong-token-000000",
    });
    expect(refused.success).toBe(false);
    expect(await store.db.workspaceAccount.count({ where: { username: "user501" } })).toBe(0);

    const saved = await api.workspace.addAccount({
      siteId: siteA,
      userId: "501",
      accessToken: ANN.accessToken,
      alias: "主力号",
      tags: ["工作", "工作", " 备用 "],
    });
    expect(saved.success && saved.data.account).toMatchObject({
      siteId: siteA,
      siteName: "甲站",
      userId: 501,
      username: "user501",
      alias: "主力号",
      tags: ["工作", "备用"],
      state: "ok",
      stateMessage: null,
    });
    const list = await api.workspace.accounts();
    expect(JSON.stringify(list)).not.toContain(ANN.accessToken);
    const row = await store.db.workspaceAccount.findFirstOrThrow({
      where: { username: "user501" },
      select: { accessToken: true },
    });
    expect(row.accessToken).toMatch(/^v1\.s1\./);
    expect(row.accessToken).not.toContain(ANN.accessToken);

    // The account routes of today read the workspace's accounts.
    const summary = await api.account.summary({});
    expect(summary.success).toBe(true);
    const listed = await api.account.list();
    expect(listed.accounts.map((a) => [a.key, a.active, a.saved?.alias])).toEqual([
      [String(saved.success && saved.data.account.id), true, "主力号"],
    ]);
    // The ledger's answers name it by its alias too (the charts and tables call it so), and the
    // workspace says the zone its pages read times in.
    const day = new Date().toISOString().slice(0, 10);
    const usage = await api.usage.summary({ from: day, to: day, accounts: "all", groupBy: "day" });
    expect(usage.data.accounts.map((a) => [a.alias, a.username])).toEqual([["主力号", "user501"]]);
    expect((await api.workspace.me()).data.workspace.timeZone).toBe("Asia/Shanghai");

    // The same account again, under another alias: it is there, and nothing changes.
    const before = await store.db.workspaceAccount.findFirstOrThrow({
      where: { username: "user501" },
      select: { alias: true, tags: true, accessToken: true },
    });
    expect(
      await api.workspace.addAccount({ siteId: siteA, userId: 501, accessToken: ANN.accessToken, alias: "另一个" }),
    ).toEqual({
      success: false,
      message: "这个账户已保存在工作区中（主力号），没有做任何修改；要换访问令牌，请在「工作区」页对它点「重新授权」",
    });
    expect(
      await store.db.workspaceAccount.findFirstOrThrow({
        where: { username: "user501" },
        select: { alias: true, tags: true, accessToken: true },
      }),
    ).toEqual(before);
  });

  it("two workspaces that saved the same site account never see each other's", async () => {
    const tokenA = await register("隔离甲");
    const tokenB = await register("隔离乙");
    const a = caller(bearer(tokenA)).api;
    const b = caller(bearer(tokenB)).api;
    const savedA = await a.workspace.addAccount({
      siteId: siteA,
      userId: 502,
      accessToken: BEN.accessToken,
      alias: "甲的",
    });
    const savedB = await b.workspace.addAccount({
      siteId: siteA,
      userId: 502,
      accessToken: BEN.accessToken,
      alias: "乙的",
    });
    if (!savedA.success || !savedB.success) throw new Error("save failed");
    const idA = savedA.data.account.id;
    expect(savedB.data.account.id).not.toBe(idA);

    const notFound = { code: "NOT_FOUND", message: "工作区中没有这个账户" };
    await expect(b.workspace.updateAccount({ id: idA, alias: "偷改" })).rejects.toMatchObject(notFound);
    await expect(b.workspace.removeAccount({ id: idA })).rejects.toMatchObject(notFound);
    await expect(b.workspace.switchAccount({ id: idA })).rejects.toMatchObject(notFound);
    await expect(b.account.switch({ key: String(idA) })).rejects.toMatchObject(notFound);
    await expect(b.account.overviewRow({ key: String(idA) })).rejects.toMatchObject(notFound);
    const bAsked = (extra: object) => callerFor(store.db, bearer(tokenB), { accountParam: String(idA), ...extra }).api;
    await expect(bAsked({}).account.summary({})).rejects.toMatchObject(notFound);
    await expect(bAsked({}).account.logs({})).rejects.toMatchObject(notFound);
    await expect(bAsked({}).usage.status()).rejects.toMatchObject(notFound);
    await expect(bAsked({}).export.count({ from: "2026-11-01", to: "2026-11-02" })).rejects.toMatchObject(notFound);

    const overviewB = await b.account.overview({});
    expect(overviewB.data.rows.map((r) => r.saved?.alias)).toEqual(["乙的"]);
    const listA = await a.workspace.accounts();
    expect(listA.data.accounts.map((x) => x.alias)).toEqual(["甲的"]);
    // Removing B's copy with its ledger keeps the ledger A still uses.
    const removed = await b.workspace.removeAccount({ id: savedB.data.account.id, ledger: true });
    expect(removed.data).toMatchObject({ ledgerDeleted: false, note: "该账户的账本仍被其他工作区使用，已保留" });
    expect((await a.workspace.accounts()).data.accounts).toHaveLength(1);
  });

  it("renews the account session from the saved token; a refused token is 需要重新授权 until a new one is given", async () => {
    const token = await register("重新授权");
    const api = caller(bearer(token)).api;
    const saved = await api.workspace.addAccount({ siteId: siteB, userId: 503, accessToken: CAT.accessToken });
    if (!saved.success) throw new Error(saved.message);
    const id = saved.data.account.id;

    // The account session ended (24 hours passed): the next read signs in again with the saved token.
    const first = await store.db.workspaceAccount.findUniqueOrThrow({ where: { id }, select: { sessionId: true } });
    await store.db.session.deleteMany({ where: { id: first.sessionId ?? "" } });
    const calls = oneHub.requests.filter((r) => r.path === "/api/user/self").length;
    expect((await api.account.summary({})).success).toBe(true);
    expect(oneHub.requests.filter((r) => r.path === "/api/user/self").length).toBeGreaterThan(calls);
    const renewed = await store.db.workspaceAccount.findUniqueOrThrow({ where: { id }, select: { sessionId: true } });
    expect(renewed.sessionId).not.toBe(first.sessionId);

    // The site resets the token; the account's session ends again.
    CAT.accessToken = "sk-cat-new-token-9876543210";
    await store.db.session.deleteMany({ where: { id: renewed.sessionId ?? "" } });
    const answer = await api.account.summary({});
    expect(answer.success).toBe(false);
    expect(!answer.success && answer.message).toMatch(/^站点拒绝了保存的访问令牌，请重新授权/);
    const listed = await api.workspace.accounts();
    expect(listed.data.accounts[0]).toMatchObject({ id, state: "reauth" });
    const overview = await api.account.overview({});
    expect(overview.data.rows[0]).toMatchObject({ state: "refused", saved: { state: "reauth" } });
    // Its ledger stays readable.
    expect((await api.usage.status()).running).toBe(false);

    const wrong = await api.workspace.updateAccount({ id, accessToken: "sk-still-wrong-000000" });
    expect(wrong.success).toBe(false);
    const fixed = await api.workspace.updateAccount({ id, accessToken: CAT.accessToken, alias: "新令牌" });
    expect(fixed.success && fixed.data.account).toMatchObject({ id, state: "ok", alias: "新令牌" });
    expect((await api.account.summary({})).success).toBe(true);
  });

  it("refuses a tampered sealed token, and one copied to another account's row", async () => {
    const token = await register("篡改");
    const api = caller(bearer(token)).api;
    const ann = await api.workspace.addAccount({ siteId: siteB, userId: 501, accessToken: ANN.accessToken });
    const ben = await api.workspace.addAccount({ siteId: siteB, userId: 502, accessToken: BEN.accessToken });
    if (!ann.success || !ben.success) throw new Error("save failed");
    const rows = await store.db.workspaceAccount.findMany({
      where: { id: { in: [ann.data.account.id, ben.data.account.id] } },
      select: { id: true, accessToken: true, sessionId: true },
      orderBy: { id: "asc" },
    });
    const [annRow, benRow] = rows as [(typeof rows)[0], (typeof rows)[0]];
    const flipped = annRow.accessToken.slice(0, -3) + (annRow.accessToken.endsWith("A") ? "BAA" : "AAA");
    await store.db.workspaceAccount.update({
      where: { id: annRow.id },
      data: { accessToken: flipped },
      select: { id: true },
    });
    await store.db.workspaceAccount.update({
      where: { id: benRow.id },
      data: { accessToken: annRow.accessToken },
      select: { id: true },
    });
    await store.db.session.deleteMany({ where: { id: { in: [annRow.sessionId ?? "", benRow.sessionId ?? ""] } } });
    const calls = oneHub.requests.length;
    const overview = await api.account.overview({});
    expect(overview.data.rows.map((r) => [r.saved?.state, r.message])).toEqual([
      ["reauth", "保存的访问令牌无法解密（密钥已更换），请重新授权"],
      ["reauth", "保存的访问令牌无法解密（密钥已更换），请重新授权"],
    ]);
    // Nothing was sent to the site.
    expect(oneHub.requests.length).toBe(calls);
  });

  it("rotates keys: old rows open under the map, reseal moves them to the newest key", async () => {
    const k1 = "vault-key-one-0123456789abcdefghijklmnop";
    const k2 = "vault-key-two-0123456789abcdefghijklmnop";
    setVaultKeys(JSON.stringify({ "1": k1 }));
    const token = await register("轮换密钥");
    const api = caller(bearer(token)).api;
    const saved = await api.workspace.addAccount({ siteId: siteA, userId: 501, accessToken: ANN.accessToken });
    if (!saved.success) throw new Error(saved.message);
    const id = saved.data.account.id;
    const read = () =>
      store.db.workspaceAccount.findUniqueOrThrow({ where: { id }, select: { accessToken: true, sessionId: true } });
    expect((await read()).accessToken).toMatch(/^v1\.k1\./);

    setVaultKeys(JSON.stringify({ "1": k1, "2": k2 }));
    const counts = await resealSavedTokens(store.db);
    expect(counts.resealed).toBeGreaterThanOrEqual(1);
    // Only the rows an earlier test tampered with stay as they are.
    const tampered = await store.db.workspaceAccount.count({ where: { stateMessage: { contains: "无法解密" } } });
    expect(counts.unopenable).toBe(tampered);
    expect((await read()).accessToken).toMatch(/^v1\.k2\./);

    // Key 1 gone: the resealed row still renews.
    setVaultKeys(JSON.stringify({ "2": k2 }));
    await store.db.session.deleteMany({ where: { id: (await read()).sessionId ?? "" } });
    expect((await api.account.summary({})).success).toBe(true);
    setVaultKeys(undefined);
  });

  it("says 站点已移除 for an account whose site left the registry, and keeps it out of no total silently", async () => {
    const extra = await startGateway({ family: "new-api", users: [ANN] });
    try {
      const siteId = (await siteRegistry(store.db).add({ name: "将移除", url: extra.url })).id;
      const token = await register("站点移除");
      const api = caller(bearer(token)).api;
      await api.workspace.addAccount({ siteId, userId: 501, accessToken: ANN.accessToken });
      await siteRegistry(store.db).remove(siteId);
      const listed = await api.workspace.accounts();
      expect(listed.data.accounts[0]).toMatchObject({
        siteName: null,
        state: "site_removed",
        stateMessage: "站点已移除",
      });
      const summary = await api.account.summary({});
      expect(summary).toEqual({ success: false, message: "站点已移除" });
    } finally {
      await extra.close();
    }
  });

  it("keeps alias, tags, pinned, excluded and order; excluded accounts stay out of the totals", async () => {
    const token = await register("账户设置");
    const api = caller(bearer(token)).api;
    const one = await api.workspace.addAccount({ siteId: siteA, userId: 501, accessToken: ANN.accessToken });
    const two = await api.workspace.addAccount({ siteId: siteB, userId: 502, accessToken: BEN.accessToken });
    if (!one.success || !two.success) throw new Error("save failed");
    await api.workspace.updateAccount({ id: two.data.account.id, pinned: true, tags: ["常用"] });
    await api.workspace.updateAccount({ id: one.data.account.id, excluded: true });
    const list = await api.workspace.accounts();
    expect(list.data.accounts.map((a) => [a.id, a.pinned, a.excluded, a.tags])).toEqual([
      [two.data.account.id, true, false, ["常用"]],
      [one.data.account.id, false, true, []],
    ]);
    await expect(
      api.workspace.updateAccount({ id: one.data.account.id, tags: ["x".repeat(21)] }),
    ).rejects.toMatchObject({
      message: "标签最多 20 个，每个 1 到 20 个字符",
    });
    const overview = await api.account.overview({});
    expect(overview.data.totals.accounts).toBe(1);
  });
});

describe("import and export", () => {
  it("imports an All API Hub backup: aliases, tags, pinned and totals kept; the rest listed with why", async () => {
    const token = await register("导入插件备份");
    const api = caller(bearer(token)).api;
    const backup = {
      version: "2.0",
      timestamp: Date.now(),
      accounts: {
        accounts: [
          {
            id: "a1",
            site_name: "我的主站",
            site_url: `${newApi.url}/`,
            site_type: "new-api",
            authType: "access_token",
            account_info: { id: 501, access_token: ANN.accessToken, username: "user501", quota: 1 },
            tagIds: ["t1"],
            tags: ["旧标签"],
            excludeFromTotalBalance: true,
            notes: "",
          },
          {
            id: "a2",
            site_name: "未注册站",
            site_url: "https://unknown.example.com",
            authType: "access_token",
            account_info: { id: 9, access_token: "sk-unknown-0000000000" },
          },
          {
            id: "a3",
            site_name: "Cookie 站",
            site_url: newApi.url,
            authType: "cookie",
            account_info: { id: 502, access_token: "" },
          },
          {
            id: "a4",
            site_name: "令牌失效",
            site_url: oneHub.url,
            authType: "access_token",
            account_info: { id: 503, access_token: "sk-revoked-000000000000" },
          },
        ],
        bookmarks: [],
        pinnedAccountIds: ["a1"],
        orderedAccountIds: ["a4", "a1"],
        last_updated: Date.now(),
      },
      tagStore: { version: 1, tagsById: { t1: { id: "t1", name: "主力", createdAt: 0, updatedAt: 0 } } },
      preferences: {},
      channelConfigs: {},
    };
    const imported = await api.workspace.importAccounts({ file: backup });
    expect(imported.data.format).toBe("all-api-hub");
    expect(imported.data.outcomes.map((o) => [o.siteName, o.result])).toEqual([
      ["令牌失效", "refused"],
      ["我的主站", "saved"],
      ["未注册站", "unregistered"],
      ["Cookie 站", "skipped"],
    ]);
    // A site neither registered nor the workspace's own is added after its probe; this one cannot be reached.
    expect(imported.data.outcomes[2]?.message).toMatch(/^无法添加这个站点：无法读取这个站点（.+），请检查地址$/);
    expect(JSON.stringify(imported)).not.toContain(ANN.accessToken);
    const saved = (await api.workspace.accounts()).data.accounts;
    expect(saved.map((a) => [a.alias, a.tags, a.pinned, a.excluded, a.userId])).toEqual([
      ["我的主站", ["主力", "旧标签"], true, true, 501],
    ]);
    // Importing again refreshes the token and keeps what was set here.
    await api.workspace.updateAccount({ id: saved[0]!.id, alias: "改过的名字" });
    const again = await api.workspace.importAccounts({ file: backup });
    expect(again.data.outcomes.find((o) => o.siteName === "我的主站")?.result).toBe("updated");
    expect((await api.workspace.accounts()).data.accounts.map((a) => a.alias)).toEqual(["改过的名字"]);
  });

  it("imports a metapi backup (user id from extraConfig) and refuses a file it cannot read", async () => {
    const token = await register("导入metapi");
    const api = caller(bearer(token)).api;
    const backup = {
      version: "2.1",
      timestamp: Date.now(),
      type: "accounts",
      accounts: {
        sites: [{ id: 7, name: "乙站", url: oneHub.url, platform: "one-hub" }],
        accounts: [
          {
            id: 1,
            siteId: 7,
            username: "ben",
            accessToken: BEN.accessToken,
            isPinned: true,
            sortOrder: 2,
            extraConfig: JSON.stringify({ platformUserId: 502 }),
          },
          { id: 2, siteId: 7, username: "nouid", accessToken: "sk-whatever-00000000", sortOrder: 1, extraConfig: null },
        ],
        accountTokens: [],
        tokenRoutes: [],
        routeChannels: [],
      },
    };
    const imported = await api.workspace.importAccounts({ file: backup });
    expect(imported.data.format).toBe("metapi");
    expect(imported.data.outcomes.map((o) => [o.alias, o.result, o.message])).toEqual([
      ["乙站 · nouid", "skipped", "备份中缺少该账户的用户 ID"],
      ["乙站 · ben", "saved", null],
    ]);
    expect((await api.workspace.accounts()).data.accounts[0]).toMatchObject({ userId: 502, pinned: true, state: "ok" });
    await expect(api.workspace.importAccounts({ file: { hello: "world" } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: "无法识别的备份文件：请选择 All API Hub 或 metapi 导出的 JSON 文件",
    });
  });

  it("exports the account list as JSON and CSV without any token", async () => {
    const token = await register("导出账户");
    const api = caller(bearer(token)).api;
    await api.workspace.addAccount({
      siteId: siteA,
      userId: 501,
      accessToken: ANN.accessToken,
      alias: "=危险别名",
      tags: ["甲"],
    });
    const read = async (format: "json" | "csv") => {
      const file = await api.workspace.exportAccounts({ format });
      return {
        name: file.data.filename,
        text: new TextDecoder("utf-8", { ignoreBOM: true }).decode(file.data.body as Uint8Array),
      };
    };
    const json = await read("json");
    expect(json.name).toMatch(/^accounts_\d{4}-\d{2}-\d{2}\.json$/);
    const parsed = JSON.parse(json.text) as { accounts: { alias: string; userId: number; site: string }[] };
    expect(parsed.accounts).toEqual([expect.objectContaining({ alias: "=危险别名", userId: 501, site: "甲站" })]);
    const csv = await read("csv");
    expect(csv.text.startsWith("\uFEFF编号,站点")).toBe(true);
    const rows: string[][] = parse(csv.text, { bom: true });
    expect(rows[1]?.slice(1, 8)).toEqual(["甲站", newApi.url, "501", "user501", "用户501", "'=危险别名", "甲"]);
    for (const text of [json.text, csv.text]) {
      expect(text).not.toContain(ANN.accessToken);
      expect(text).not.toContain("v1.s1.");
    }
  });
});

describe("around the clock", () => {
  it("renews sessions that end soon before anyone asks, once across two runners at once", async () => {
    const token = await register("后台续期");
    const api = caller(bearer(token)).api;
    const saved = await api.workspace.addAccount({ siteId: siteA, userId: 502, accessToken: BEN.accessToken });
    if (!saved.success) throw new Error(saved.message);
    const id = saved.data.account.id;
    const sessionOf = async () =>
      (await store.db.workspaceAccount.findUniqueOrThrow({ where: { id }, select: { sessionId: true } })).sessionId ??
      "";
    const before = await sessionOf();
    // Fresh sessions wait; one that ends within three hours is renewed.
    await renewSavedSessions(store.db, { timeoutMs: 2000, perMinute: 100_000 });
    await renewSavedSessions(store.db, { timeoutMs: 2000, perMinute: 100_000 }, new Date(Date.now() + 20 * 3600_000));
    expect(await sessionOf()).toBe(before);
    // 21 hours on, its session ends within three: renewed (the other tests' accounts are not looked at).
    await store.db.workspaceAccount.updateMany({
      where: { id: { not: id } },
      data: { renewAt: new Date(Date.now() + 48 * 3600_000) },
    });
    const later = new Date(Date.now() + 21 * 60 * 60_000 + 60_000);
    const [a, b] = await Promise.all([
      renewSavedSessions(store.db, { timeoutMs: 2000, perMinute: 100_000 }, later),
      renewSavedSessions(store.db, { timeoutMs: 2000, perMinute: 100_000 }, later),
    ]);
    expect(a + b).toBe(1);
    const after = await sessionOf();
    expect(after).not.toBe(before);
    // The old session is gone, the new one lives a day.
    expect(await store.db.session.count({ where: { id: before } })).toBe(0);
    const renewed = await store.db.session.findUniqueOrThrow({ where: { id: after }, select: { expiresAt: true } });
    expect(renewed.expiresAt.getTime() - Date.now()).toBeGreaterThan(23 * 60 * 60_000);
  });

  it("shows each account's background work (when its ledger synced, when it syncs next) and the counts per site in /admin", async () => {
    const token = await register("作业状态");
    const api = callerFor(store.db, bearer(token), { timeoutMs: 2000, ledgerSyncMinutes: 10 }).api;
    const saved = await api.workspace.addAccount({ siteId: siteA, userId: 501, accessToken: ANN.accessToken });
    if (!saved.success) throw new Error(saved.message);
    const syncOf = async () => (await api.account.list()).accounts[0]?.saved?.sync;
    // The sync started on saving runs in the background: wait for it to finish.
    for (let i = 0; i < 100 && ((await syncOf())?.running || !(await syncOf())?.at); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const sync = await syncOf();
    expect(sync).toMatchObject({ running: false, error: null });
    // Next: at the account's own moment of the interval, half an interval to one and a half after.
    const wait = Date.parse(sync?.next ?? "") - Date.parse(sync?.at ?? "");
    expect(wait).toBeGreaterThanOrEqual(5 * 60_000);
    expect(wait).toBeLessThanOrEqual(15 * 60_000);
    const rest = await api.workspace.accounts();
    expect(rest.data.accounts[0]?.sync).toMatchObject({ at: sync?.at, running: false, error: null });

    await setOperatorPassword(store.db, "operator password 123");
    const login = await caller().api.admin.login({ password: "operator password 123" });
    const view = await caller(bearer(login.data.token)).api.admin.workspaces();
    expect(view.data.sites.find((s) => s.siteId === siteA)).toMatchObject({ siteName: "甲站", failing: 0 });
    expect(view.data.sites.find((s) => s.siteId === siteA)?.accounts).toBeGreaterThan(0);
  });
  it("answers a row as the last sync left it while that is fresh, asking no site (刷新 and a stale sync read it); 使用日志 falls back to the ledger, marked so", async () => {
    const history = demoHistory({ seed: 9, days: 2, callsPerDay: 400 });
    // A call a moment ago: today has spend in every zone, whatever the time the test runs at.
    const call = history.logs.filter((l) => l.type === 2).at(-1)!;
    history.logs.push({ ...call, createdAt: Math.floor(Date.now() / 1000) - 2, quota: Math.max(1, call.quota) });
    const dan: GatewayUser = {
      accessToken: "sk-dan-0123456789abcdef0123",
      data: newApiUser(504, {
        username: "user504",
        quota: history.totals.quota,
        used_quota: history.totals.usedQuota,
        request_count: history.totals.requestCount,
      }),
      logs: history.logs,
    };
    const site = await startGateway({ family: "new-api", users: [dan] });
    let closed = false;
    try {
      const siteId = (await siteRegistry(store.db).add({ name: "丙站", url: site.url })).id;
      const api = callerFor(store.db, bearer(await register("账本里的行")), {
        timeoutMs: 2000,
        ledgerSyncMinutes: 10,
      }).api;
      const saved = await api.workspace.addAccount({ siteId, userId: 504, accessToken: dan.accessToken });
      if (!saved.success) throw new Error(saved.message);
      const syncOf = async () => (await api.account.list()).accounts[0]?.saved?.sync;
      for (let i = 0; i < 100 && ((await syncOf())?.running || !(await syncOf())?.at); i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      const key = (await api.account.list()).accounts[0]?.key ?? "";
      const tz = "Asia/Shanghai";
      const live = await api.account.overviewRow({ key, tz, refresh: true });
      freshProcessState();
      let asked = site.requests.length;
      const stored = await api.account.overviewRow({ key, tz });
      expect(site.requests.length).toBe(asked);
      expect(stored.state).toBe("ok");
      // The same figures the site gives: the balance the sync noted, today's spend and requests from the ledger.
      expect(stored.summary?.balance).toEqual(live.summary?.balance);
      expect(stored.summary?.today).toEqual(live.summary?.today);
      expect(stored.summary?.today.quota).toBeGreaterThan(0);
      expect(stored.summary?.todayRequests).toBe(live.summary?.todayRequests);
      expect(stored.summary?.user).toMatchObject({ id: 504, username: "user504" });
      // A zone whose day starts inside an hour: the exact split, the same figures as the site.
      const india = await api.account.overviewRow({ key, tz: "Asia/Kolkata", refresh: true });
      freshProcessState();
      const indiaStored = await api.account.overviewRow({ key, tz: "Asia/Kolkata" });
      expect(indiaStored.summary?.today).toEqual(india.summary?.today);
      expect(indiaStored.summary?.todayRequests).toBe(india.summary?.todayRequests);
      asked = site.requests.length;
      expect(Date.parse(stored.summary?.fetchedAt ?? "")).toBeLessThanOrEqual(
        Date.parse(live.summary?.fetchedAt ?? ""),
      );
      const batch = await api.account.storedRows({ tz });
      expect(batch.rows.map((r) => [r.key, r.row.summary?.balance])).toEqual([[key, live.summary?.balance]]);
      const overview = await api.account.overview({ tz });
      expect(site.requests.length).toBe(asked);
      expect(overview.data.totals.balanceUsd).toBe(live.summary?.balance.usd);

      // A sync older than the schedule allows: the row is read from the site again.
      await store.db.ledgerSync.updateMany({
        where: { siteId },
        data: { syncedAt: new Date(Date.now() - 20 * 60_000) },
      });
      expect((await api.account.overviewRow({ key, tz })).state).toBe("ok");
      expect(site.requests.length).toBeGreaterThan(asked);

      // 使用日志 answers from the ledger, which holds the range; the site is read for what is newer.
      const fromSite = await api.account.logs({ page: 1, pageSize: 20 });
      expect(fromSite.success && fromSite.data.ledger?.recent).toBe("included");
      // The site goes away: still from the ledger, saying that the newest part could not be read.
      await site.close();
      closed = true;
      freshProcessState();
      const fromLedger = await api.account.logs({ page: 2, pageSize: 20, type: "consume" });
      if (!fromLedger.success) throw new Error(fromLedger.message);
      expect(fromLedger.data.source).toBe("ledger");
      expect(fromLedger.data.ledger?.recent).toBe("failed");
      expect(fromLedger.data.ledger?.reason).toMatch(/^无法连接站点|^站点/);
      const consumed = history.logs.filter((l) => l.type === 2).sort((a, b) => b.createdAt - a.createdAt);
      expect(fromLedger.data.total).toBe(consumed.length);
      // Newest first (entries of one second in either order).
      expect(fromLedger.data.items.map((i) => Date.parse(i.createdAt ?? "") / 1000)).toEqual(
        consumed.slice(20, 40).map((l) => l.createdAt),
      );
      expect(fromLedger.data.items.every((i) => i.type === "consume")).toBe(true);
      // Money is shown the same way whichever answered: the site's settings, kept with the site.
      expect(fromSite.success && fromSite.data.money).toMatchObject({ quotaPerUnit: 500_000 });
      expect(fromLedger.data.money).toEqual(fromSite.success ? fromSite.data.money : null);
    } finally {
      if (!closed) await site.close();
    }
  });
});

describe("the second factor", () => {
  it("asks for a TOTP code after the password, never accepts one twice, and takes each recovery code once", async () => {
    const token = await register("两步验证");
    const api = caller(bearer(token)).api;
    const started = await api.workspace.beginTotp();
    expect(started.data.uri).toMatch(/^otpauth:\/\/totp\//);
    expect(started.data.qrSvg).toMatch(/^<svg/);
    const { secret } = started.data;
    const codeAt = (offsetSeconds: number) =>
      generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });
    await expect(
      api.workspace.enableTotp({ secret, code: "000000", password: "correct horse battery" }),
    ).rejects.toMatchObject({ message: "验证码不正确，请确认验证器中的时间与名称后重试" });
    await expect(
      api.workspace.enableTotp({ secret, code: await codeAt(0), password: "wrong password!!" }),
    ).rejects.toMatchObject({ message: "当前密码错误（再错 4 次此设备将退出登录）" });
    const enabled = await api.workspace.enableTotp({
      secret,
      code: await codeAt(0),
      password: "correct horse battery",
    });
    const recovery = enabled.data.recoveryCodes;
    expect(recovery).toHaveLength(10);
    expect(
      JSON.stringify(await store.db.workspace.findMany({ select: { totpSecret: true, recoveryCodes: true } })),
    ).not.toContain(secret);

    const signIn = (totp?: string) =>
      caller().api.workspace.login({ name: "两步验证", password: "correct horse battery", totp });
    await expect(signIn()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "该工作区已开启两步验证，请输入验证器中的 6 位验证码或一个恢复码",
    });
    await expect(signIn("123456")).rejects.toMatchObject({ message: "两步验证码错误或已使用" });
    const next = await codeAt(30);
    expect((await signIn(next)).success).toBe(true);
    // The same code again, or an older one: refused.
    await expect(signIn(next)).rejects.toMatchObject({ message: "两步验证码错误或已使用" });
    await expect(signIn(await codeAt(0))).rejects.toMatchObject({ message: "两步验证码错误或已使用" });
    // A recovery code, once, however it is typed.
    const first = recovery[0] ?? "";
    expect((await signIn(` ${first.toUpperCase()} `)).success).toBe(true);
    await expect(signIn(first)).rejects.toMatchObject({ message: "两步验证码错误或已使用" });
    expect((await api.workspace.totpStatus()).data).toEqual({ enabled: true, recoveryLeft: 9 });

    await api.workspace.disableTotp({ code: recovery[1] ?? "", password: "correct horse battery" });
    expect((await signIn()).success).toBe(true);
  });
});

describe("devices and API tokens", () => {
  it("lists devices, ends one, ends the others on a password change, and everywhere", async () => {
    const first = await register("设备");
    const second = (
      await caller({
        "user-agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Safari/605.1",
      }).api.workspace.login({
        name: "设备",
        password: "correct horse battery",
      })
    ).data.token;
    const api = caller(bearer(first)).api;
    const devices = await api.workspace.devices();
    expect(devices.data.devices.map((d) => [d.device, d.current])).toEqual([
      ["Safari · iOS", false],
      ["未知客户端", true],
    ]);
    const other = devices.data.devices[0]!.id;
    await api.workspace.revokeDevice({ id: other });
    await expect(caller(bearer(second)).api.workspace.me()).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "未登录或登录已过期",
    });

    const third = (await caller().api.workspace.login({ name: "设备", password: "correct horse battery" })).data.token;
    await expect(
      api.workspace.changePassword({ current: "not the password", next: "a brand new password" }),
    ).rejects.toMatchObject({
      message: "当前密码错误（再错 4 次此设备将退出登录）",
    });
    expect(
      (await api.workspace.changePassword({ current: "correct horse battery", next: "a brand new password" })).ended,
    ).toBe(1);
    await expect(caller(bearer(third)).api.workspace.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect((await api.workspace.me()).success).toBe(true);
    await expect(
      caller().api.workspace.login({ name: "设备", password: "correct horse battery" }),
    ).rejects.toMatchObject({ code: "UNAUTHORIZED" });

    await api.workspace.signOutEverywhere();
    await expect(api.workspace.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("signs a device out after five wrong passwords or codes: a stolen cookie cannot guess the password", async () => {
    const token = await register("猜密码");
    const api = caller(bearer(token)).api;
    for (let left = 4; left >= 1; left--) {
      await expect(
        api.workspace.changePassword({ current: `guess number ${left}!!`, next: "a brand new password" }),
      ).rejects.toMatchObject({ message: `当前密码错误（再错 ${left} 次此设备将退出登录）` });
    }
    // The fifth wrong guess (here through the second factor's setup) ends the device.
    const { secret } = (await api.workspace.beginTotp()).data;
    await expect(
      api.workspace.enableTotp({ secret, code: "000000", password: "the fifth guess!!" }),
    ).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "密码或验证码错误次数过多，此设备已退出登录，请重新登录",
    });
    // Even the right password now: the session is gone.
    await expect(
      api.workspace.changePassword({ current: "correct horse battery", next: "a brand new password" }),
    ).rejects.toMatchObject({ code: "UNAUTHORIZED", message: "未登录或登录已过期" });
    // The owner signs in again with the password, unchanged.
    expect((await caller().api.workspace.login({ name: "猜密码", password: "correct horse battery" })).success).toBe(
      true,
    );
  });

  it("ends every API token on a password change and on signing out everywhere (recovery)", async () => {
    const token = await register("找回");
    const api = caller(bearer(token)).api;
    const minted = (await api.workspace.createApiToken({ name: "入侵者", access: "write" })).data.token;
    expect((await caller(bearer(minted)).api.workspace.me()).success).toBe(true);
    await api.workspace.changePassword({ current: "correct horse battery", next: "a brand new password" });
    await expect(caller(bearer(minted)).api.workspace.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect((await api.workspace.apiTokens()).data.tokens).toEqual([]);

    const again = (await api.workspace.createApiToken({ name: "又一个", access: "read" })).data.token;
    await api.workspace.signOutEverywhere();
    await expect(caller(bearer(again)).api.workspace.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("makes read-only and read-write API tokens, shown once and revocable", async () => {
    const token = await register("API令牌");
    const api = caller(bearer(token)).api;
    await api.workspace.addAccount({ siteId: siteA, userId: 501, accessToken: ANN.accessToken });
    const read = await api.workspace.createApiToken({ name: "报表脚本", access: "read" });
    expect(read.data.token).toMatch(/^gdk_/);
    const listed = await api.workspace.apiTokens();
    expect(JSON.stringify(listed)).not.toContain(read.data.token);
    expect(listed.data.tokens.map((t) => [t.name, t.access])).toEqual([["报表脚本", "read"]]);

    const reader = caller(bearer(read.data.token)).api;
    expect((await reader.account.summary({})).success).toBe(true);
    expect((await reader.workspace.me()).data.access).toBe("read");
    await expect(
      reader.workspace.addAccount({ siteId: siteA, userId: 502, accessToken: BEN.accessToken }),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: "该 API 令牌只读，不能修改工作区",
    });
    await expect(reader.usage.sync()).rejects.toMatchObject({ code: "FORBIDDEN" });

    await api.workspace.revokeApiToken({ id: read.data.id });
    await expect(reader.workspace.me()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("refuses a cross-site write carried by the workspace cookie", async () => {
    const { ctx } = caller();
    await caller()
      .api.workspace.register({ name: "跨站", password: "correct horse battery" })
      .then(() => undefined);
    const { api, ctx: regCtx } = caller();
    await api.workspace.register({ name: "跨站二", password: "correct horse battery" });
    const cookie = cookieFrom(regCtx.resHeaders);
    expect(ctx).toBeDefined();
    const foreign = callerFor(store.db, { cookie, origin: "https://evil.example" }, { origin: "http://localhost" }).api;
    await expect(
      foreign.workspace.addAccount({ siteId: siteA, userId: 501, accessToken: ANN.accessToken }),
    ).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: "非法的请求来源",
    });
    const same = callerFor(store.db, { cookie, origin: "http://localhost" }, { origin: "http://localhost" }).api;
    expect((await same.workspace.me()).data.workspace.name).toBe("跨站二");
  });
});
