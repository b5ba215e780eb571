import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import { freshProcessState } from "../../src/server/core/process-state";
import { setOperatorPassword } from "../../src/server/admin/operator";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/**
 * A workspace's own sites (docs/design.md 25) against stand-in gateways on loopback (allowed here,
 * as an operator allows a gateway on its own network): probed before saving, offered to the
 * workspaces that added them and to nobody else, one site per address whoever adds it, the
 * operator's limit, block and adoption, and an import that adds the sites it does not know.
 */
process.env.WORKSPACE_SITES_ALLOW_PRIVATE = "1";
process.env.WORKSPACE_SITES = "2";

let store: TempDb;
const gateways: RunningGateway[] = [];
let own: RunningGateway, other: RunningGateway, third: RunningGateway, registered: RunningGateway;

const DORA: GatewayUser = { accessToken: "sk-dora-0123456789abcdef01", data: newApiUser(701, { username: "dora" }) };
const EVAN: GatewayUser = { accessToken: "sk-evan-0123456789abcdef01", data: newApiUser(702, { username: "evan" }) };

/** A refusal the procedure answers in words (HTTP 200 `success: false` over REST). */
const refused = (message: unknown) => ({ success: false, message });

/** The data of an answer that should be a success. */
function ok<T>(answer: { success: true; data: T } | { success: false; message: string }): T {
  if (!answer.success) throw new Error(answer.message);
  return answer.data;
}

let address = 0;
const caller = (headers: Record<string, string> = {}) =>
  callerFor(store.db, headers, { timeoutMs: 2000, clientAddress: `203.0.113.${(address++ % 250) + 1}` });

async function workspace(name: string) {
  const token = (await caller().api.workspace.register({ name, password: "correct horse battery" })).data.token;
  return caller(bearer(token)).api;
}

async function operator() {
  await setOperatorPassword(store.db, "operator password 123");
  const login = await caller().api.admin.login({ password: "operator password 123" });
  return caller(bearer(login.data.token)).api;
}

beforeAll(async () => {
  store = await tempStore();
  for (const name of ["自建站", "另一站", "第三站", "登记站"]) {
    gateways.push(
      await startGateway({
        family: "new-api",
        users: [DORA, EVAN],
        requireUserHeader: true,
        failureStatus: 401,
        status: { system_name: name },
      }),
    );
  }
  [own, other, third, registered] = gateways as [RunningGateway, RunningGateway, RunningGateway, RunningGateway];
  await siteRegistry(store.db).add({ name: "登记站", url: registered.url });
});
afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await store?.cleanup();
});
beforeEach(() => {
  freshProcessState();
});

describe("a workspace's own sites", () => {
  it("are probed first, then offered to that workspace alone, and signed in to there only", async () => {
    const a = await workspace("自建甲");
    const b = await workspace("自建乙");
    const found = await a.workspace.probeSite({ url: `${own.url}/` });
    expect(found).toMatchObject({ success: true, data: { url: own.url, name: "自建站", family: "new-api" } });
    // Probing saved nothing.
    expect((await a.workspace.sites()).data.own).toEqual([]);

    const { site } = ok(await a.workspace.addSite({ url: own.url }));
    expect(site).toMatchObject({ name: "自建站", url: own.url });
    const listed = (await a.workspace.sites()).data;
    expect(listed.own.map((s) => s.id)).toEqual([site.id]);
    expect(listed.registered.map((s) => s.name)).toEqual(["登记站"]);
    expect(listed.limit).toBe(2);

    // Not offered to anyone else: not in the public list, not to a browser's sign-in, not to another workspace.
    expect((await caller().api.site.list()).map((s) => s.id)).not.toContain(site.id);
    const browser = await caller().api.auth.login({ siteId: site.id, userId: 701, accessToken: DORA.accessToken });
    expect(browser).toEqual({ success: false, message: "站点不存在" });
    const intruder = await b.workspace.addAccount({ siteId: site.id, userId: 701, accessToken: DORA.accessToken });
    expect(intruder).toEqual({ success: false, message: "站点不存在" });
    expect((await b.workspace.sites()).data.own).toEqual([]);

    // The workspace signs in to it as to any site.
    const saved = await a.workspace.addAccount({ siteId: site.id, userId: 701, accessToken: DORA.accessToken });
    expect(saved.success && saved.data.account).toMatchObject({ siteName: "自建站", username: "dora", state: "ok" });
    expect(await a.workspace.removeSite({ id: site.id })).toEqual(
      refused("本工作区还有 1 个账户在这个站点上，请先移除它们"),
    );
  });

  it("are one site per address: a second workspace shares it, and it goes with its last workspace", async () => {
    const a = await workspace("共享甲");
    const b = await workspace("共享乙");
    const first = ok(await a.workspace.addSite({ url: other.url })).site;
    const second = ok(await b.workspace.addSite({ url: `${other.url}/` })).site;
    expect(second.id).toBe(first.id);
    expect(await b.workspace.addSite({ url: other.url })).toEqual(refused("这个站点已在本工作区的站点中"));
    await b.workspace.removeSite({ id: first.id });
    expect(await siteRegistry(store.db).find(first.id)).not.toBeNull();
    await a.workspace.removeSite({ id: first.id });
    expect(await siteRegistry(store.db).find(first.id)).toBeNull();
  });

  it("refuse a registered address, a blank one, a dead one, one past the limit, and a read-only token", async () => {
    const a = await workspace("拒绝甲");
    expect(await a.workspace.probeSite({ url: registered.url })).toEqual(
      refused("这个地址已是本服务登记的站点「登记站」，添加账户时直接选择它即可"),
    );
    expect(await a.workspace.probeSite({ url: "" })).toEqual(refused("请填写站点地址"));
    expect(await a.workspace.probeSite({ url: "ftp://example.com" })).toEqual(
      refused("站点地址必须以 http:// 或 https:// 开头: ftp://example.com"),
    );
    expect(await a.workspace.probeSite({ url: "http://127.0.0.1:9" })).toEqual(
      refused(expect.stringMatching(/^无法读取这个站点（.+），请检查地址$/) as unknown),
    );
    await a.workspace.addSite({ url: own.url });
    await a.workspace.addSite({ url: other.url });
    expect(await a.workspace.addSite({ url: third.url })).toEqual(
      refused("每个工作区最多添加 2 个站点，请先移除不用的站点"),
    );
    const read = (await a.workspace.createApiToken({ name: "只读", access: "read" })).data.token;
    await expect(caller(bearer(read)).api.workspace.addSite({ url: third.url })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });

  it("keep one workspace's probes to itself: a budget per address, 30 probes a minute", async () => {
    const small = (token: string) =>
      callerFor(store.db, bearer(token), { timeoutMs: 2000, siteRequestsPerMinute: 20, clientAddress: "203.0.113.77" })
        .api;
    const register = async (name: string) =>
      small((await caller().api.workspace.register({ name, password: "correct horse battery" })).data.token);
    const flood = await register("探测甲");
    const quiet = await register("探测乙");
    const answers = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => flood.workspace.probeSite({ url: `${own.url}/?n=${i}` })),
    );
    const limited = answers.filter((a) => a.status === "rejected" && /探测站点过于频繁/.test(String(a.reason)));
    expect(limited).toHaveLength(10);
    // Another workspace's probe of another address is answered, not 站点繁忙.
    const found = await quiet.workspace.probeSite({ url: other.url });
    expect(found.success).toBe(true);
  });

  it("are listed, blocked and adopted by the operator", async () => {
    const admin = await operator();
    const a = await workspace("运营甲");
    const site = ok(await a.workspace.addSite({ url: third.url })).site;
    const saved = await a.workspace.addAccount({ siteId: site.id, userId: 702, accessToken: EVAN.accessToken });
    expect(saved.success).toBe(true);
    const view = (await admin.admin.workspaceSites()).data;
    expect(view.sites.find((s) => s.id === site.id)).toMatchObject({ family: "new-api", workspaces: 1 });

    // Blocked: taken from the workspace (its account says so, its history kept), and refused from then on.
    expect(ok(await admin.admin.blockSite({ url: third.url })).removed).toBe(1);
    expect((await a.workspace.accounts()).data.accounts.map((x) => x.stateMessage)).toEqual(["站点已移除"]);
    expect(await a.workspace.probeSite({ url: third.url })).toEqual(refused("管理员已禁止添加这个站点地址"));
    expect((await admin.admin.workspaceSites()).data.blocked.map((b) => b.url)).toEqual([third.url]);
    const audit = (await admin.admin.audit({})).data.entries.map((e) => e.action);
    expect(audit).toContain("siteBlock");
    await admin.admin.unblockSite({ url: third.url });

    // Registered by the operator: the same site, now offered to everyone, its accounts kept.
    // (Spelt with its slash: the same request again within seconds is taken for a double click.)
    const again = ok(await a.workspace.addSite({ url: `${third.url}/` })).site;
    const adopted = await admin.admin.addSite({ name: "第三站（登记）", url: third.url });
    expect(adopted.success && adopted.data.site.id).toBe(again.id);
    expect((await caller().api.site.list()).map((s) => s.id)).toContain(again.id);
    expect((await a.workspace.sites()).data.own).toEqual([]);
  });

  it("are added by an import for the addresses it does not know, after their probe", async () => {
    const a = await workspace("导入甲");
    const backup = {
      version: "4.0",
      timestamp: Date.now(),
      accounts: {
        accounts: [
          {
            id: "x1",
            site_name: "文件里的名字",
            site_url: own.url,
            authType: "access_token",
            account_info: { id: 701, access_token: DORA.accessToken },
          },
        ],
      },
    };
    const imported = await a.workspace.importAccounts({ file: backup });
    expect(imported.data.outcomes.map((o) => o.result)).toEqual(["saved"]);
    expect((await a.workspace.sites()).data.own.map((s) => s.url)).toEqual([own.url]);
    expect((await a.workspace.accounts()).data.accounts.map((x) => x.siteName)).toEqual(["自建站"]);
  });
});
