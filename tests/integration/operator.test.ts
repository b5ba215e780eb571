import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { operatorSignIn, setOperatorPassword } from "../../src/server/admin/operator";
import { freshProcessState } from "../../src/server/core/process-state";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor, expectBadParam, signInWith } from "../support/caller";
import { tempSqlite, tempStore, type TempDb } from "../support/db";
import { ALICE, startLegacyGateway } from "../support/gateway";
import { startFamilySite } from "../support/families";
import { freshRateWindow } from "../support/http";
import { ROOT } from "../support/server";

/**
 * The operator (docs/design.md 15): the password set with the CLI as a scrypt hash, sign-in with its
 * own session and cookie, rate limits per address and in total, the CSRF rule, expiry, and the two
 * kinds of session never standing in for each other; every sign-in in the audit log.
 */

const PASSWORD = "correct horse battery staple";
let store: TempDb;

beforeEach(async () => {
  store = await tempStore();
  // Site ids start at 1 in every store: the gates' counts of the previous test's sites go.
  freshProcessState();
});
afterEach(async () => {
  await store.cleanup();
});

const from = (address: string, headers: Record<string, string> = {}, adminLoginRateLimit = 20) =>
  callerFor(store.db, headers, { clientAddress: address, adminLoginRateLimit });

/** The audit log's entries (the first page), as the operator reads them. */
async function auditOf(token: string, query: Record<string, unknown> = {}) {
  const answer = await from("10.0.0.9", bearer(token)).api.admin.audit(query);
  return answer.data;
}

describe("npm run sites -- admin-password", () => {
  it("stores only a scrypt hash, refuses a short password, and replacing it ends every operator session", async () => {
    const cli = tempSqlite();
    try {
      const run = (input: string) => {
        const res = spawnSync(
          process.execPath,
          [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/sites.ts", "admin-password"],
          { cwd: ROOT, env: { ...process.env, DATABASE_URL: cli.url, DATA_DIR: cli.dir }, input, encoding: "utf8" },
        );
        return { code: res.status, stdout: res.stdout, stderr: res.stderr };
      };
      const short = run("too short\n");
      expect(short.code).toBe(1);
      expect(short.stderr).toContain("密码至少需要 12 个字符");
      expect(await cli.db.operator.count()).toBe(0);

      const set = run(`${PASSWORD}\n`);
      expect(set.code, set.stderr).toBe(0);
      expect(JSON.parse(set.stdout)).toEqual({ passwordSet: true, endedSessions: 0 });
      const row = await cli.db.operator.findUniqueOrThrow({ where: { id: 1 } });
      expect(row.passwordHash).toMatch(/^scrypt\$16384\$8\$1\$/);
      expect(row.passwordHash).not.toContain(PASSWORD);

      await operatorSignIn(cli.db, { password: PASSWORD, clientAddress: "10.0.0.1", perMinute: 20 });
      const again = run("another long password\n");
      expect(JSON.parse(again.stdout)).toEqual({ passwordSet: true, endedSessions: 1 });
      expect(await cli.db.operatorSession.count()).toBe(0);
      await expect(
        operatorSignIn(cli.db, { password: PASSWORD, clientAddress: "10.0.0.1", perMinute: 20 }),
      ).rejects.toThrow("管理员密码错误");
    } finally {
      await cli.cleanup();
    }
  }, 60_000);
});

describe("the operator's sign-in", () => {
  it("says how to set a password when none is set", async () => {
    await expect(from("10.0.0.1").api.admin.login({ password: PASSWORD })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: "尚未设置管理员密码：请在服务器上运行 npm run sites -- admin-password",
    });
  });

  it("signs in with the right password (token, HttpOnly cookie), refuses a wrong one uniformly, and logs both", async () => {
    await setOperatorPassword(store.db, PASSWORD);
    for (const password of ["wrong password here", "", undefined, 42]) {
      await expect(from("10.0.0.1").api.admin.login({ password })).rejects.toMatchObject({
        code: "UNAUTHORIZED",
        message: "管理员密码错误",
      });
    }
    const { api, ctx } = from("10.0.0.2");
    const answer = await api.admin.login({ password: PASSWORD });
    expect(answer.data.token).toMatch(/^[0-9a-f-]{36}$/);
    const cookie = ctx.resHeaders.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^gd_admin=[0-9a-f-]{36}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=28800$/);
    // Only the token's SHA-256 is stored.
    expect((await store.db.operatorSession.findMany()).map((r) => r.id)).toEqual([
      createHash("sha256").update(answer.data.token).digest("hex"),
    ]);

    const audit = await auditOf(answer.data.token);
    // Failed sign-ins of one address are one entry, counted.
    expect(audit.entries.map((e) => [e.action, e.actor, e.count])).toEqual([
      ["signIn", "10.0.0.2", 1],
      ["signInFailed", "10.0.0.1", 4],
      ["password", "命令行", 1],
    ]);
    expect(JSON.stringify(audit)).not.toContain(PASSWORD);

    await from("10.0.0.2", bearer(answer.data.token)).api.admin.logout();
    await expect(from("10.0.0.2", bearer(answer.data.token)).api.admin.audit({})).rejects.toMatchObject({
      code: "UNAUTHORIZED",
      message: "未登录或登录已过期",
    });
  });

  it("limits attempts per address, the right password included, with Retry-After; a budget of 0 is still 1", async () => {
    // The attempts are counted per clock minute: each pair below must fall in one.
    await freshRateWindow();
    await setOperatorPassword(store.db, PASSWORD);
    for (let i = 0; i < 2; i++) {
      await expect(from("10.0.0.1", {}, 2).api.admin.login({ password: "wrong password here" })).rejects.toThrow();
    }
    const limited = from("10.0.0.1", {}, 2);
    await expect(limited.api.admin.login({ password: PASSWORD })).rejects.toMatchObject({
      code: "TOO_MANY_REQUESTS",
      message: "登录尝试过于频繁，请稍后再试",
    });
    expect(Number(limited.ctx.resHeaders.get("retry-after"))).toBeGreaterThan(0);
    // The operator's limit is never off.
    await expect(from("10.0.3.1", {}, 0).api.admin.login({ password: "wrong password here" })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    await expect(from("10.0.3.1", {}, 0).api.admin.login({ password: PASSWORD })).rejects.toMatchObject({
      code: "TOO_MANY_REQUESTS",
    });
  });

  it("never refuses an address for others' failures: 21 wrong guesses from each of 3 addresses slow, not lock, the owner", async () => {
    await setOperatorPassword(store.db, PASSWORD);
    for (const address of ["10.0.1.1", "10.0.1.2", "10.0.1.3"]) {
      const answers = await Promise.allSettled(
        Array.from({ length: 21 }, () => from(address).api.admin.login({ password: "wrong password here" })),
      );
      const codes = answers.map((a) => (a.status === "rejected" ? (a.reason as { code: string }).code : "OK"));
      expect(codes.filter((c) => c === "UNAUTHORIZED")).toHaveLength(20);
      expect(codes.filter((c) => c === "TOO_MANY_REQUESTS")).toHaveLength(1);
    }
    const started = Date.now();
    const owner = await from("10.0.2.1").api.admin.login({ password: PASSWORD });
    expect(owner.data.token).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 60_000);

  it("keeps real changes in sight: failures are counted per address, and the log pages and filters", async () => {
    await setOperatorPassword(store.db, PASSWORD);
    // 101 wrong passwords from five addresses (their own budgets are lifted for this), all within
    // one of the log's ten-minute windows: the clock stands at the start of the current one.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() - (Date.now() % 600_000));
    try {
      for (let i = 0; i < 101; i++) {
        await expect(
          from(`10.0.4.${i % 5}`, {}, 1000).api.admin.login({ password: "wrong password here" }),
        ).rejects.toMatchObject({ code: "UNAUTHORIZED" });
      }
    } finally {
      vi.useRealTimers();
    }
    const { data } = await from("10.0.0.2").api.admin.login({ password: PASSWORD });
    const api = from("10.0.0.2", bearer(data.token)).api;
    const gateway = await startLegacyGateway();
    try {
      const added = await api.admin.addSite({ name: "新站点", url: gateway.url });
      if (!added.success) throw new Error(added.message);
      const first = await auditOf(data.token);
      expect(first.entries.map((e) => e.action)).toEqual([
        "siteAdd",
        "signIn",
        ...Array.from({ length: 5 }, () => "signInFailed"),
        "password",
      ]);
      expect(first.entries.filter((e) => e.action === "signInFailed").reduce((n, e) => n + e.count, 0)).toBe(101);
      // Only site changes, a page of one at a time.
      const sites = await auditOf(data.token, { actions: "siteAdd,siteEdit,siteRemove", limit: 1 });
      expect(sites.entries.map((e) => [e.action, e.siteId])).toEqual([["siteAdd", added.data.site.id]]);
      expect(sites.next).toBeNull();
      const older = await auditOf(data.token, { limit: 2, before: first.entries[1]?.id });
      expect(older.entries.map((e) => e.action)).toEqual(["signInFailed", "signInFailed"]);
      expect(older.next).toBe(older.entries[1]?.id);
      await expectBadParam(api.admin.audit({ actions: "nonsense" }), "actions");
    } finally {
      await gateway.close();
    }
  }, 60_000);

  it("refuses a sign-in from another site's page, and a cross-site sign-out by cookie", async () => {
    await setOperatorPassword(store.db, PASSWORD);
    await expect(
      from("10.0.0.1", { origin: "https://evil.example" }).api.admin.login({ password: PASSWORD }),
    ).rejects.toMatchObject({ code: "FORBIDDEN", message: "非法的请求来源" });
    expect(await store.db.operatorSession.count()).toBe(0);
    const { data } = await from("10.0.0.1").api.admin.login({ password: PASSWORD });
    await expect(
      from("10.0.0.1", { cookie: `gd_admin=${data.token}`, origin: "https://evil.example" }).api.admin.logout(),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(from("10.0.0.1", { cookie: `gd_admin=${data.token}` }).api.admin.audit({})).resolves.toMatchObject({
      success: true,
    });
  });

  it("ends a session after 8 hours", async () => {
    await setOperatorPassword(store.db, PASSWORD);
    const { data } = await from("10.0.0.1").api.admin.login({ password: PASSWORD });
    await store.db.operatorSession.updateMany({ data: { expiresAt: new Date(Date.now() - 1000) } });
    await expect(from("10.0.0.1", bearer(data.token)).api.admin.audit({})).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    expect(await store.db.operatorSession.count()).toBe(0);
  });
});

describe("two kinds of session", () => {
  it("an operator session reads no account, and an account's session no admin route", async () => {
    await setOperatorPassword(store.db, PASSWORD);
    const gateway = await startLegacyGateway();
    try {
      const { id } = await siteRegistry(store.db).add({ name: "站点", url: gateway.url });
      const account = await signInWith(store.db, id, ALICE);
      const { data } = await from("10.0.0.1").api.admin.login({ password: PASSWORD });
      const asOperator = [bearer(data.token), { cookie: `gd_admin=${data.token}` }];
      for (const headers of asOperator) {
        const { api } = from("10.0.0.1", headers);
        for (const call of [
          () => api.auth.me(),
          () => api.auth.logout(),
          () => api.session.list(),
          () => api.account.list(),
          () => api.account.summary({}),
          () => api.account.logs({}),
          () => api.account.tokens({}),
          () => api.account.topups({}),
          () => api.account.overview({}),
          () => api.usage.status(),
          () => api.usage.sync(),
          () => api.usage.summary({}),
          () => api.usage.balance({}),
          () => api.export.count({}),
          () => api.export.usageCsv({}),
          () => api.export.statement({ month: "2026-11" }),
        ]) {
          await expect(call()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
        }
      }
      for (const headers of [bearer(account.token), { cookie: account.cookie }]) {
        const { api } = from("10.0.0.1", headers);
        await expect(api.admin.audit({})).rejects.toMatchObject({ code: "UNAUTHORIZED" });
        await expect(api.admin.logout()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
      }
    } finally {
      await gateway.close();
    }
  });
});

describe("managing the sites", () => {
  it("adds after a probe, asks before saving an unreachable site, edits, removes on confirmation, and logs it all", async () => {
    await setOperatorPassword(store.db, PASSWORD);
    const newApi = await startFamilySite("new-api", 0);
    const hub = await startFamilySite("one-hub", 1);
    const closed = await startFamilySite("one-api", 2);
    await closed.gateway.close();
    try {
      const { data } = await from("10.0.0.9").api.admin.login({ password: PASSWORD });
      const { api } = from("10.0.0.9", bearer(data.token));

      expect(await api.admin.addSite({ name: "坏地址", url: "ftp://example.com" })).toEqual({
        success: false,
        message: "站点地址必须以 http:// 或 https:// 开头: ftp://example.com",
      });
      expect(await api.admin.addSite({ name: "", url: newApi.gateway.url })).toMatchObject({ success: false });
      await expectBadParam(api.admin.addSite({ name: "x", url: 42 } as never), "url");

      const added = await api.admin.addSite({ name: "主站", url: `${newApi.gateway.url}/`, requestsPerMinute: 30 });
      if (!added.success) throw new Error(added.message);
      expect(added.data.probe).toMatchObject({ reachable: true, family: "new-api", quotaPerUnit: 500_000 });
      expect(added.data.site).toMatchObject({
        name: "主站",
        url: newApi.gateway.url,
        family: "new-api",
        requestsPerMinute: 30,
        health: { ok: true, error: null },
        liveSessions: 0,
      });

      const unreachable = await api.admin.addSite({ name: "已关闭", url: closed.gateway.url });
      expect(unreachable).toMatchObject({
        success: false,
        needsConfirmation: true,
        probe: { reachable: false, error: "连接被拒绝" },
      });
      expect((await api.admin.sites()).data.map((s) => s.name)).toEqual(["主站"]);
      const confirmed = await api.admin.addSite({ name: "已关闭", url: closed.gateway.url, confirmUnreachable: true });
      if (!confirmed.success) throw new Error(confirmed.message);
      expect(confirmed.data.site.health).toMatchObject({ ok: false, error: "连接被拒绝" });

      // Moving a site to another address probes it first: now it is a one-hub.
      const id = added.data.site.id;
      const moved = await api.admin.editSite({ id, name: "主站（新）", url: hub.gateway.url, requestsPerMinute: null });
      if (!moved.success) throw new Error(moved.message);
      expect(moved.data.site).toMatchObject({ name: "主站（新）", family: "one-hub", requestsPerMinute: null });

      // Removal says how many live sessions the site has, and needs a yes; the sessions go on.
      const account = await signInWith(store.db, id, hub.user);
      expect(await api.admin.removeSite({ id })).toEqual({ success: true, data: { removed: false, liveSessions: 1 } });
      expect(await api.admin.removeSite({ id, confirm: true })).toEqual({
        success: true,
        data: { removed: true, liveSessions: 1 },
      });
      const me = await callerFor(store.db, bearer(account.token)).api.auth.me();
      expect(me.data).not.toHaveProperty("site");

      const probed = await api.admin.probe({});
      if (!probed.success) throw new Error(probed.message);
      expect(probed.data.map((s) => [s.name, s.health?.ok])).toEqual([["已关闭", false]]);

      const answer = await api.admin.audit({});
      const log = answer.data.entries;
      expect(log.slice(0, 4).map((e) => [e.action, e.siteId])).toEqual([
        ["siteRemove", id],
        ["siteEdit", id],
        ["siteAdd", confirmed.data.site.id],
        ["siteAdd", id],
      ]);
      expect(log[1]).toMatchObject({
        before: { name: "主站", url: newApi.gateway.url, requestsPerMinute: 30 },
        after: { name: "主站（新）", url: hub.gateway.url, requestsPerMinute: null },
      });
      expect(log[0]?.before).toMatchObject({ name: "主站（新）" });
    } finally {
      await Promise.all([newApi.gateway.close(), hub.gateway.close()]);
    }
  });

  it("keeps a site's own request budget", async () => {
    const site = await startFamilySite("new-api", 0);
    try {
      const { id } = await siteRegistry(store.db).add({ name: "站点", url: site.gateway.url });
      await siteRegistry(store.db).setBudget(id, 3);
      const { token } = await signInWith(store.db, id, site.user);
      const api = callerFor(store.db, bearer(token), { siteRequestsPerMinute: 1000, siteBudgetWaitMs: 0 }).api;
      // The sign-in, the probe and one page fill this site's budget of 3; the deployment's 1000 does not apply.
      expect(await api.account.logs({ page: 1 })).toMatchObject({ success: true });
      expect(await api.account.logs({ page: 2 })).toEqual({
        success: false,
        message: expect.stringMatching(/^站点繁忙，请约 \d+ 秒后再试$/) as unknown,
      });
      await expect(siteRegistry(store.db).setBudget(id, 0)).rejects.toThrow(
        "每分钟请求数必须是 1 到 100000 之间的整数",
      );
    } finally {
      await site.gateway.close();
    }
  });

  it("keeps one site per address: a second name for a registered gateway is refused, saying which site has it", async () => {
    await setOperatorPassword(store.db, PASSWORD);
    const site = await startFamilySite("new-api", 0);
    const other = await startFamilySite("one-hub", 1);
    try {
      const { data } = await from("10.0.0.10").api.admin.login({ password: PASSWORD });
      const { api } = from("10.0.0.10", bearer(data.token));
      const first = await api.admin.addSite({ name: "主站", url: site.gateway.url });
      if (!first.success) throw new Error(first.message);
      const id = first.data.site.id;
      // The same gateway spelled another way: upper-case host, a trailing slash.
      const again = `${site.gateway.url.replace("http://", "HTTP://")}/`;
      const refused = `该地址已登记为站点「主站」（编号 ${id}）：同一个网关只登记一次`;
      const asked = site.gateway.requests.length;
      expect(await api.admin.addSite({ name: "副站", url: again })).toEqual({ success: false, message: refused });
      // Refused before its address was probed.
      expect(site.gateway.requests.length).toBe(asked);
      const second = await api.admin.addSite({ name: "另一站", url: other.gateway.url });
      if (!second.success) throw new Error(second.message);
      expect(await api.admin.editSite({ id: second.data.site.id, url: site.gateway.url })).toEqual({
        success: false,
        message: refused,
      });
      // Its own address again is no change of address.
      expect(await api.admin.editSite({ id, url: `${site.gateway.url}/`, name: "主站" })).toMatchObject({
        success: true,
      });
      expect((await api.admin.sites()).data.map((s) => s.name).sort()).toEqual(["主站", "另一站"].sort());
      // An empty address is named as what is missing.
      expect(await api.admin.addSite({ name: "空", url: "  " })).toEqual({ success: false, message: "请填写站点地址" });
    } finally {
      await Promise.all([site.gateway.close(), other.gateway.close()]);
    }
  });

  it("answers every site route with 401 to an account's session", async () => {
    const gateway = await startLegacyGateway();
    try {
      const { id } = await siteRegistry(store.db).add({ name: "站点", url: gateway.url });
      const account = await signInWith(store.db, id, ALICE);
      const { api } = from("10.0.0.1", bearer(account.token));
      for (const call of [
        () => api.admin.sites(),
        () => api.admin.addSite({ name: "x", url: gateway.url }),
        () => api.admin.editSite({ id, name: "y" }),
        () => api.admin.removeSite({ id, confirm: true }),
        () => api.admin.probe({}),
      ]) {
        await expect(call()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
      }
      expect((await siteRegistry(store.db).list()).map((s) => s.name)).toEqual(["站点"]);
    } finally {
      await gateway.close();
    }
  });
});
