import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import { freshProcessState } from "../../src/server/core/process-state";
import { setVaultKeys } from "../../src/server/session/vault";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";
import { decryptLikeHub } from "../support/hub-client";
import { sealEnvelope } from "../../src/server/hub/envelope";

/**
 * A whole workspace in an encrypted file (docs/design.md 26): made on one server with the
 * workspace's password and a passphrase, opened with the extension's own way of opening its
 * encrypted files, and restored on another server (another store, another vault key, the site not
 * registered there) into an empty workspace, every account verified with its site again.
 */
process.env.WORKSPACE_SITES_ALLOW_PRIVATE = "1";
process.env.ALERT_ALLOW_PRIVATE = "1";

const IDA: GatewayUser = { accessToken: "sk-backup-ida-0123456789abc", data: newApiUser(901, { username: "ida" }) };
const JON: GatewayUser = { accessToken: "sk-backup-jon-0123456789abc", data: newApiUser(902, { username: "jon" }) };

let here: TempDb;
let there: TempDb;
let site: RunningGateway;
let address = 0;
const caller = (store: TempDb, headers: Record<string, string> = {}) =>
  callerFor(store.db, headers, { timeoutMs: 2000, clientAddress: `203.0.113.${(address++ % 250) + 1}` }).api;

async function workspace(store: TempDb, name: string) {
  const made = await caller(store).workspace.register({ name, password: "correct horse battery" });
  return caller(store, bearer(made.data.token));
}

beforeAll(async () => {
  [here, there] = [await tempStore(), await tempStore()];
  site = await startGateway({
    family: "new-api",
    users: [IDA, JON],
    status: { system_name: "备份站", checkin_enabled: true },
  });
}, 30_000);
afterAll(async () => {
  await site?.close();
  await here?.cleanup();
  await there?.cleanup();
  setVaultKeys(undefined);
});

describe("a workspace's backup", () => {
  it("carries every account, its settings and alerts to an empty workspace on another server", async () => {
    freshProcessState();
    setVaultKeys(JSON.stringify({ "1": "vault-key-of-the-first-server-0123456789" }));
    const { id: siteId } = await siteRegistry(here.db).add({ name: "备份站", url: site.url });
    const api = await workspace(here, "备份甲");
    const ida = await api.workspace.addAccount({
      siteId,
      userId: 901,
      accessToken: IDA.accessToken,
      alias: "主力",
      tags: ["个人"],
    });
    const jon = await api.workspace.addAccount({ siteId, userId: 902, accessToken: JON.accessToken });
    if (!ida.success || !jon.success) throw new Error("not saved");
    await api.workspace.updateAccount({ id: ida.data.account.id, pinned: true, autoCheckin: true });
    await api.workspace.updateAccount({ id: jon.data.account.id, excluded: true });
    await api.alerts.setTimeZone({ timeZone: "Europe/Berlin" });
    const channel = await api.alerts.createChannel({
      type: "ntfy",
      name: "手机",
      url: "http://127.0.0.1:9/topic",
      token: "tk_secret_ntfy_token",
    });
    if (!channel.success) throw new Error(channel.message);
    await api.alerts.createRule({
      kind: "balance_below",
      account: ida.data.account.id,
      threshold: 3,
      channels: [channel.data.channel.id],
    });
    await api.alerts.setDigest({ cadence: "daily", time: "08:30", channels: [channel.data.channel.id] });

    // The workspace's password first (counted like any other guess), and a passphrase worth the name.
    await expect(
      api.workspace.backup({ password: "wrong password!", passphrase: "backup passphrase" }),
    ).rejects.toThrow("当前密码错误（再错 4 次此设备将退出登录）");
    await expect(api.workspace.backup({ password: "correct horse battery", passphrase: "short" })).rejects.toThrow(
      "备份密码至少需要 8 个字符",
    );
    const made = await api.workspace.backup({ password: "correct horse battery", passphrase: "backup passphrase" });
    expect(made.data.filename).toMatch(/^workspace-backup-\d{4}-\d{2}-\d{2}\.json$/);
    const text = new TextDecoder().decode(made.data.body as Uint8Array);
    // Nothing readable without the passphrase; the extension's own decryption opens it.
    expect(text).not.toContain(IDA.accessToken);
    expect(text).not.toContain("tk_secret_ntfy_token");
    const envelope = JSON.parse(text) as Record<string, unknown>;
    const inside = JSON.parse(await decryptLikeHub(envelope, "backup passphrase")) as {
      version: string;
      accounts: { accounts: { account_info: { access_token: string }; configVersion: number; tagIds: string[] }[] };
      tagStore: { tagsById: Record<string, { name: string }> };
    };
    expect(inside.version).toBe("4.0");
    expect(inside.accounts.accounts.map((a) => a.account_info.access_token).sort()).toEqual(
      [IDA.accessToken, JON.accessToken].sort(),
    );
    expect(inside.accounts.accounts.every((a) => a.configVersion === 7)).toBe(true);
    expect(Object.values(inside.tagStore.tagsById).map((t) => t.name)).toEqual(["个人"]);

    // Another server: its own store and vault key, and the site not registered there.
    freshProcessState();
    setVaultKeys(JSON.stringify({ "7": "vault-key-of-another-server-0123456789" }));
    const busy = await workspace(there, "已有账户");
    const probe = await busy.workspace.addSite({ url: site.url });
    if (!probe.success) throw new Error(probe.message);
    await busy.workspace.addAccount({ siteId: probe.data.site.id, userId: 902, accessToken: JON.accessToken });
    await expect(busy.workspace.restore({ file: text, passphrase: "backup passphrase" })).rejects.toThrow(
      "只能恢复到还没有账户的工作区：请新建一个工作区再恢复",
    );
    const fresh = await workspace(there, "恢复乙");
    await expect(fresh.workspace.restore({ file: text, passphrase: "not the passphrase" })).rejects.toThrow(
      "备份密码不正确，或文件已损坏",
    );
    const restored = await fresh.workspace.restore({ file: text, passphrase: "backup passphrase" });
    expect(restored.data.outcomes.map((o) => o.result)).toEqual(["saved", "saved"]);
    // The three rules every workspace starts with, and the one made here.
    expect(restored.data.alerts).toEqual({ channels: 1, rules: 4, digests: 1 });
    const accounts = (await fresh.workspace.accounts()).data.accounts;
    expect(accounts.map((a) => [a.userId, a.alias, a.tags, a.pinned, a.excluded, a.autoCheckin])).toEqual([
      [901, "主力", ["个人"], true, false, true],
      [902, null, [], false, true, false],
    ]);
    const rules = (await fresh.alerts.rules()).data;
    expect(rules.timeZone).toBe("Europe/Berlin");
    const before = (await api.alerts.rules()).data.rules.map((r) => [r.kind, r.account === "all" ? "all" : "one"]);
    expect(rules.rules.map((r) => [r.kind, r.account === "all" ? "all" : "one"])).toEqual(before);
    expect(rules.rules.find((r) => r.kind === "balance_below")?.account).toBe(accounts[0]!.id);
    const channels = (await fresh.alerts.channels()).data.channels;
    expect(channels.map((c) => [c.type, c.name])).toEqual([["ntfy", "手机"]]);
    expect((await fresh.alerts.digests()).data.digests.map((d) => [d.cadence, d.time])).toEqual([["daily", "08:30"]]);
  });

  it("checks a restored channel exactly as a created one: a file's bot token never chooses a path", async () => {
    freshProcessState();
    const { id: siteId } = (await here.db.site.findFirst({ where: { name: "备份站" }, select: { id: true } }))!;
    const api = await workspace(here, "备份丙");
    await api.workspace.addAccount({ siteId, userId: 901, accessToken: IDA.accessToken });
    const made = await api.workspace.backup({ password: "correct horse battery", passphrase: "backup passphrase" });
    const envelope = JSON.parse(new TextDecoder().decode(made.data.body as Uint8Array)) as Record<string, unknown>;
    const inside = JSON.parse(await decryptLikeHub(envelope, "backup passphrase")) as {
      gatewayDashboard: { alerts: { channels: unknown[] } };
    };
    const channel = (id: number, type: string, settings: Record<string, unknown>) => ({
      ...{ id, type, name: `渠道 ${id}`, target: "看起来无害" },
      settings: { type, ...settings },
    });
    inside.gatewayDashboard.alerts.channels = [
      // A token that walks the path and a query of the attacker's choosing.
      channel(1, "telegram", { botToken: "1/../../attacker/path?x=", chatId: "42" }),
      channel(2, "webhook", { url: "file:///etc/passwd", secret: "0123456789abcdef0123" }),
      channel(3, "wecom", { key: "k/../../x" }),
      channel(4, "email", { to: "not an address" }),
      channel(5, "webhook", { url: "http://127.0.0.1:9/hook", secret: "short" }),
      channel(6, "telegram", { botToken: `123456:${"A".repeat(30)}`, chatId: "@my_channel" }),
    ];
    const file = await sealEnvelope(JSON.stringify(inside), "backup passphrase");
    const fresh = await workspace(there, "恢复丁");
    const restored = await fresh.workspace.restore({ file, passphrase: "backup passphrase" });
    // Only the sound one: its target written here, not the file's.
    expect(restored.data.alerts.channels).toBe(1);
    const channels = (await fresh.alerts.channels()).data.channels;
    expect(channels.map((c) => [c.type, c.target])).toEqual([["telegram", "Telegram @my_channel"]]);
  });

  it("is all or nothing: a file of wrong types saves nothing, two at once make one, a dead restore is undone", async () => {
    freshProcessState();
    const { id: siteId } = (await here.db.site.findFirst({ where: { name: "备份站" }, select: { id: true } }))!;
    const api = await workspace(here, "备份戊");
    for (const [userId, user] of [
      [901, IDA],
      [902, JON],
    ] as const) {
      await api.workspace.addAccount({ siteId, userId, accessToken: user.accessToken });
    }
    const channel = await api.alerts.createChannel({ type: "ntfy", name: "手机", url: "http://127.0.0.1:9/t" });
    if (!channel.success) throw new Error(channel.message);
    await api.alerts.setDigest({ cadence: "daily", time: "08:30", channels: [channel.data.channel.id] });
    const made = await api.workspace.backup({ password: "correct horse battery", passphrase: "backup passphrase" });
    const good = new TextDecoder().decode(made.data.body as Uint8Array);
    const inside = JSON.parse(
      await decryptLikeHub(JSON.parse(good) as Record<string, unknown>, "backup passphrase"),
    ) as {
      gatewayDashboard: { accounts: Array<Record<string, unknown>> };
    };
    inside.gatewayDashboard.accounts[1]!.tags = "不是列表";
    const wrong = await sealEnvelope(JSON.stringify(inside), "backup passphrase");

    const target = await workspace(there, "恢复己");
    const count = async () => (await target.workspace.accounts()).data.accounts.length;
    await expect(target.workspace.restore({ file: wrong, passphrase: "backup passphrase" })).rejects.toThrow(
      "gatewayDashboard.accounts.1.tags 的内容不对，未恢复任何内容",
    );
    expect(await count()).toBe(0);

    // Two at once (a double click, or two instances): one restores, the other is told; nothing twice.
    const both = await Promise.allSettled([
      target.workspace.restore({ file: good, passphrase: "backup passphrase" }),
      target.workspace.restore({ file: good, passphrase: "backup passphrase" }),
    ]);
    expect(both.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const other = both.find((r) => r.status === "rejected");
    expect(String(other?.status === "rejected" ? other.reason : "")).toMatch(
      /正在恢复备份|只能恢复到还没有账户的工作区/,
    );
    expect(await count()).toBe(2);
    expect((await target.alerts.channels()).data.channels).toHaveLength(1);
    expect((await target.alerts.digests()).data.digests).toHaveLength(1);

    // A restore whose process died half way: its hold lapsed with two accounts and a channel made.
    const dead = await workspace(there, "恢复庚");
    const half = await dead.workspace.restore({ file: good, passphrase: "backup passphrase" });
    const wsId = (await there.db.workspace.findFirst({ where: { name: "恢复庚" }, select: { id: true } }))!.id;
    const accountIds = half.data.outcomes.map((o) => o.accountId!);
    const channelIds = (await dead.alerts.channels()).data.channels.map((c) => c.id);
    await there.db.workspaceRestore.create({
      data: {
        workspaceId: wsId,
        heldUntil: new Date(Date.now() - 1000),
        made: JSON.stringify({ accounts: accountIds, channels: channelIds }),
      },
    });
    const again = await dead.workspace.restore({ file: good, passphrase: "backup passphrase" });
    expect(again.data.outcomes.map((o) => o.result)).toEqual(["saved", "saved"]);
    expect((await dead.workspace.accounts()).data.accounts).toHaveLength(2);
    expect((await dead.alerts.channels()).data.channels).toHaveLength(1);
    expect(await there.db.workspaceRestore.count({ where: { workspaceId: wsId } })).toBe(0);
    // A hold that has not lapsed is another restore under way.
    await there.db.workspaceRestore.create({ data: { workspaceId: wsId, heldUntil: new Date(Date.now() + 60_000) } });
    await expect(dead.workspace.restore({ file: good, passphrase: "backup passphrase" })).rejects.toThrow(
      "这个工作区正在恢复备份，请等这次恢复结束后再试",
    );
  });

  it("starts at most five restores a minute in a workspace", async () => {
    freshProcessState();
    const api = await workspace(there, "恢复辛");
    const tries = [];
    for (let i = 0; i < 6; i++) {
      tries.push(await api.workspace.restore({ file: "{}", passphrase: "backup passphrase" }).catch((e: Error) => e));
    }
    expect(tries.slice(0, 5).every((t) => t instanceof Error && !/过于频繁/.test(t.message))).toBe(true);
    expect(tries[5]).toMatchObject({ code: "TOO_MANY_REQUESTS", message: "恢复备份过于频繁，请稍后再试" });
  });
});
