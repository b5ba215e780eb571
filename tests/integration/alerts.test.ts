import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import { accountOf } from "../../src/server/accounts/overview";
import { resealAlertChannels } from "../../src/server/alerts/channels";
import { deliverDue } from "../../src/server/alerts/deliver";
import { closeDb, createDb } from "../../src/server/db/client";
import { setVaultKeys } from "../../src/server/session/vault";
import { freshProcessState } from "../../src/server/core/process-state";
import { evaluateAlerts } from "../../src/server/jobs/alerts";
import { syncLedger } from "../../src/server/ledger/sync";
import { sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";
import { dayIn } from "../../src/server/core/time";
import { parse } from "csv-parse/sync";

// The receivers below listen on loopback: the operator's switch for private targets is on here.
process.env.ALERT_ALLOW_PRIVATE = "1";

/**
 * Alerts end to end in one process: a stand-in site whose balance the test moves, the ledger
 * synced, the rules evaluated as the runner does, and the outbox delivered to webhook receivers
 * that check the signature. Each event opens, stays silent, escalates and resolves once.
 */

type Received = { headers: IncomingHttpHeaders; body: string };

async function receiver(status: () => number = () => 200, delayMs = 0) {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const code = status();
      if (code === 200) received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      setTimeout(() => {
        res.writeHead(code);
        res.end();
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook?k=1`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let store: TempDb;
let site: RunningGateway;
const closers: Array<() => Promise<void>> = [];
const USER: GatewayUser = {
  accessToken: "sk-alerts-0123456789abcdef0123",
  data: newApiUser(701, { username: "watcher", display_name: "监控号", quota: 5_000_000 }),
  logs: [],
};

beforeEach(async () => {
  store = await tempStore();
  freshProcessState();
  USER.logs = [];
  USER.topups = [];
  site = await startGateway({ family: "new-api", users: [USER] });
  closers.push(() => site.close());
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
  await store.cleanup();
});

/** A workspace with the stand-in's account saved and its ledger synced. */
async function workspace() {
  const { id: siteId } = await siteRegistry(store.db).add({ name: "提醒站", url: site.url });
  const { api: anon } = callerFor(store.db, {}, { clientAddress: "198.51.100.7" });
  const registered = await anon.workspace.register({ name: "提醒工作区", password: "correct horse battery" });
  // No sync at saving: the test syncs the ledger itself, at the balances it sets.
  const { api } = callerFor(store.db, bearer(registered.data.token), { ledgerSyncMinutes: 0 });
  const saved = await api.workspace.addAccount({ siteId, userId: 701, accessToken: USER.accessToken });
  if (!saved.success) throw new Error(saved.message);
  const accountId = saved.data.account.id;
  let syncs = 0;
  // Syncs ten seconds apart from now on; a call logged between the last sync and the next.
  const t0 = Math.floor(Date.now() / 1000);
  const logCall = (usd: number, at = t0 + 10 * syncs + 5) =>
    USER.logs?.push({
      createdAt: at,
      type: 2,
      model: "gpt-4o",
      tokenName: "脚本",
      tokenId: 1,
      quota: Math.round(usd * 500_000),
      promptTokens: 1000,
      completionTokens: 500,
      durationMs: 900,
      stream: false,
      content: "",
    });
  const sync = async (usd: number, backfillDays = 2) => {
    USER.data.quota = Math.round(usd * 500_000);
    // A fresh read of the site (no answer kept from the last), noted a second later than the last.
    freshProcessState();
    const row = await store.db.workspaceAccount.findFirst({ where: { id: accountId }, select: { sessionId: true } });
    const session = await sessionStore(store.db).findLiveById(row?.sessionId ?? "", new Date());
    if (!session) throw new Error("no session");
    await syncLedger(
      store.db,
      accountOf(session),
      { db: store.db, timeoutMs: 5000, perMinute: 100_000 },
      { backfillDays, now: t0 + 10 * ++syncs },
    );
  };
  return { api, accountId, sync, logCall, t0 };
}

const minutes = (n: number, from = Date.now()) => new Date(from + n * 60_000);
const events = (r: { received: Received[] }) => r.received.map((m) => (JSON.parse(m.body) as { event: string }).event);

describe("alert rules", () => {
  it("start with three defaults for a new workspace, editable", async () => {
    const { api } = await workspace();
    const rules = await api.alerts.rules();
    expect(rules.data.rules.map((r) => [r.kind, r.account, r.threshold])).toEqual([
      ["days_left_below", "all", 3],
      ["token_refused", "all", null],
      ["site_down", "all", 30],
    ]);
    const bad = await api.alerts.createRule({ kind: "balance_below", account: "all", threshold: -1 });
    expect(bad).toEqual({ success: false, message: "余额（美元）须在 0.01 到 1000000 之间" });
    const none = await api.alerts.createRule({ kind: "site_down", account: 9999, threshold: 30 });
    expect(none).toEqual({ success: false, message: "工作区中没有这个账户" });
  });

  it("opens once after holding twice, stays silent, escalates by its step, resolves once; signed webhooks", async () => {
    const { api, accountId, sync } = await workspace();
    for (const r of (await api.alerts.rules()).data.rules) await api.alerts.removeRule({ id: r.id });
    const hook = await receiver();
    closers.push(hook.close);
    const channel = await api.alerts.createChannel({ type: "webhook", name: "我的钩子", url: hook.url });
    if (!channel.success) throw new Error(channel.message);
    expect(channel.data.channel.target).toBe(hook.url.replace("?k=1", ""));
    const rule = await api.alerts.createRule({
      kind: "balance_below",
      account: accountId,
      threshold: 5,
      step: 2,
      channels: [channel.data.channel.id],
    });
    if (!rule.success) throw new Error(rule.message);

    await sync(10);
    const t = Date.now();
    expect(await evaluateAlerts(store.db, minutes(0, t))).toBe(0);
    await sync(4);
    // Held once: pending, nothing sent; held again: opened.
    expect(await evaluateAlerts(store.db, minutes(1, t))).toBe(0);
    expect(await evaluateAlerts(store.db, minutes(2, t))).toBe(1);
    expect(await deliverDue(store.db, minutes(2, t))).toBe(1);
    // Still low: silent.
    expect(await evaluateAlerts(store.db, minutes(3, t))).toBe(0);
    await sync(3.5);
    expect(await evaluateAlerts(store.db, minutes(4, t))).toBe(0);
    // Worse by the step (2): sent again.
    await sync(1.5);
    expect(await evaluateAlerts(store.db, minutes(5, t))).toBe(1);
    await deliverDue(store.db, minutes(5, t));
    // Topped up: clear twice, then resolved.
    await sync(20);
    expect(await evaluateAlerts(store.db, minutes(6, t))).toBe(0);
    expect(await evaluateAlerts(store.db, minutes(7, t))).toBe(1);
    await deliverDue(store.db, minutes(7, t));
    expect(await deliverDue(store.db, minutes(8, t))).toBe(0);

    expect(events(hook)).toEqual(["opened", "escalated", "resolved"]);
    const first = hook.received[0]!;
    const body = JSON.parse(first.body) as Record<string, { [k: string]: unknown }>;
    expect(body.alert).toMatchObject({ state: "open", message: "余额 $4.00，低于 $5.00", value: 4 });
    expect(body.account).toMatchObject({ id: accountId, name: "监控号", site: "提醒站", userId: 701 });
    const ts = String(first.headers["x-gd-timestamp"]);
    const expected = createHmac("sha256", channel.data.secret ?? "")
      .update(`${ts}.${first.body}`)
      .digest("hex");
    expect(first.headers["x-gd-signature"]).toBe(`sha256=${expected}`);
    expect(first.headers["x-gd-event"]).toBe("opened");

    const list = await api.alerts.list({});
    expect(list.data.alerts).toHaveLength(1);
    expect(list.data.alerts[0]).toMatchObject({
      state: "resolved",
      rule: { kind: "balance_below", threshold: 5 },
      account: { id: accountId, name: "监控号" },
    });
    expect(list.data.alerts[0]?.deliveries.map((d) => [d.event, d.status])).toEqual([
      ["opened", "sent"],
      ["escalated", "sent"],
      ["resolved", "sent"],
    ]);
  });

  it("drops a blip that held once, and opens token_refused for an account needing a new token", async () => {
    const { api, accountId, sync } = await workspace();
    await sync(10);
    const t = Date.now();
    await store.db.workspaceAccount.updateMany({ where: { id: accountId }, data: { state: "reauth" } });
    await evaluateAlerts(store.db, minutes(0, t));
    await store.db.workspaceAccount.updateMany({ where: { id: accountId }, data: { state: "ok" } });
    await evaluateAlerts(store.db, minutes(1, t));
    expect((await api.alerts.list({})).data.total).toBe(0);
    await store.db.workspaceAccount.updateMany({ where: { id: accountId }, data: { state: "reauth" } });
    await evaluateAlerts(store.db, minutes(2, t));
    await evaluateAlerts(store.db, minutes(3, t));
    const list = await api.alerts.list({ state: "open" });
    expect(list.data.alerts.map((a) => [a.rule.kind, a.message])).toEqual([
      ["token_refused", "站点拒绝了保存的访问令牌，需要重新授权"],
    ]);
    expect(list.data.open).toBe(1);
    // The account's row in 全部账户 carries it.
    const accounts = await api.account.list();
    expect(accounts.accounts[0]?.saved?.alerts).toEqual([
      { kind: "token_refused", message: "站点拒绝了保存的访问令牌，需要重新授权" },
    ]);
    // Removed from the workspace: its alert ends, without a message.
    await api.workspace.removeAccount({ id: accountId });
    const after = await api.alerts.list({});
    expect(after.data.open).toBe(0);
    expect(after.data.alerts.map((a) => [a.state, a.deliveries.length])).toEqual([["resolved", 0]]);
  });
});

describe("对账", () => {
  it("finds an unlogged deduction and an unlogged top-up, nothing on a clean day; unmatched_move opens", async () => {
    const { api, accountId, sync, logCall, t0 } = await workspace();
    for (const r of (await api.alerts.rules()).data.rules) await api.alerts.removeRule({ id: r.id });
    const today = dayIn("UTC", (t0 + 60) * 1000);
    const day = async () => {
      const answer = await api.alerts.reconciliation({ account: accountId, from: today, to: today, tz: "UTC" });
      if (!answer.success) throw new Error(answer.message);
      expect(answer.data.days).toHaveLength(1);
      return answer.data.days[0]!;
    };
    await sync(10);
    // A call of $1, logged: the balance and the log agree.
    logCall(1);
    await sync(9);
    expect(await day()).toMatchObject({
      day: today,
      changeUsd: -1,
      consumptionUsd: 1,
      expectedUsd: -1,
      differenceUsd: 0,
      flagged: false,
    });
    // $2 more gone, no entry for it.
    await sync(7);
    expect(await day()).toMatchObject({ changeUsd: -3, expectedUsd: -1, differenceUsd: -2, flagged: true });
    await api.alerts.createRule({ kind: "unmatched_move", account: accountId, threshold: 1 });
    const t = Date.now();
    await evaluateAlerts(store.db, minutes(0, t));
    await evaluateAlerts(store.db, minutes(1, t));
    const open = await api.alerts.list({ state: "open" });
    expect(open.data.alerts.map((a) => a.message)).toEqual(["余额变化与日志不符：多扣了 $2.00（日志中没有对应记录）"]);
    // $5 arrives with no top-up logged: the day now shows $3 more than its log.
    await sync(12);
    expect(await day()).toMatchObject({ changeUsd: 2, expectedUsd: -1, differenceUsd: 3, flagged: true });
    // 用量分析's balance chart marks the day; the export has 对账 as its own CSV.
    const balance = await api.usage.balance({ from: today, to: today, tz: "UTC" });
    expect(balance.data.accounts[0]?.series.map((p) => [p.day, p.usd, p.unmatchedUsd])).toEqual([[today, 12, 3]]);
    const file = await api.export.reconciliationCsv({ from: today, to: today, tz: "UTC" });
    const csv = new TextDecoder().decode(file.data.body as Uint8Array);
    const rows = parse<Record<string, string>>(csv.replace(/^\uFEFF/, ""), { columns: true });
    const stamp = /^\d{4}-\d\d-\d\dT/;
    expect(rows[0]?.起始快照).toMatch(stamp);
    expect(rows[0]?.结束快照).toMatch(stamp);
    const withoutTimes = (row: Record<string, string>) =>
      Object.fromEntries(Object.entries(row).filter(([k]) => k !== "起始快照" && k !== "结束快照"));
    expect(rows.map(withoutTimes)).toEqual([
      {
        日期: today,
        站点: "提醒站",
        用户: "watcher",
        "余额变化 (USD)": "2",
        "消费 (USD)": "1",
        "充值 (USD)": "0",
        "签到奖励 (USD)": "0",
        "退款 (USD)": "0",
        "无金额的调整（条）": "0",
        "日志应有变化 (USD)": "-1",
        "差额 (USD)": "3",
        不符: "是",
      },
    ]);
    expect(file.data.filename).toBe(`reconciliation_${today}_${today}.csv`);
    const tooLong = await api.alerts.reconciliation({
      account: accountId,
      from: "2026-01-01",
      to: "2026-06-01",
      tz: "UTC",
    });
    expect(tooLong).toEqual({ success: false, message: "对账一次至多 92 天" });
  });
});

describe("对账 with top-ups the log gives no amount for", () => {
  it("takes the amount from new-api's top-up history, once, and only completed ones", async () => {
    const { api, accountId, sync, t0 } = await workspace();
    for (const r of (await api.alerts.rules()).data.rules) await api.alerts.removeRule({ id: r.id });
    const today = dayIn("UTC", (t0 + 60) * 1000);
    await sync(10);
    // $5 paid and credited: the log says so without an amount; the history has it.
    const at = t0 + 15;
    USER.logs?.push({
      createdAt: at,
      type: 1,
      model: "",
      tokenName: "",
      tokenId: 0,
      quota: 0,
      promptTokens: 0,
      completionTokens: 0,
      durationMs: 0,
      stream: false,
      content: "在线充值成功",
    });
    USER.topups = [
      {
        id: 1,
        amount: 5,
        money: 36.5,
        tradeNo: "USR701NOa1",
        paymentMethod: "alipay",
        createTime: at - 60,
        completeTime: at,
        status: "success",
      },
      // Never paid: not a move of the balance.
      {
        id: 2,
        amount: 50,
        money: 365,
        tradeNo: "USR701NOa2",
        paymentMethod: "alipay",
        createTime: at - 30,
        completeTime: 0,
        status: "pending",
      },
    ];
    await sync(15);
    const answer = await api.alerts.reconciliation({ account: accountId, from: today, to: today, tz: "UTC" });
    if (!answer.success) throw new Error(answer.message);
    expect(answer.data.days[0]).toMatchObject({
      changeUsd: 5,
      topupsUsd: 5,
      expectedUsd: 5,
      differenceUsd: 0,
      flagged: false,
    });
  });
});

describe("spend_spike", () => {
  it("opens when today's spend so far is past k times the median of the last 7 days at this hour", async () => {
    const { api, accountId, sync, logCall, t0 } = await workspace();
    for (const r of (await api.alerts.rules()).data.rules) await api.alerts.removeRule({ id: r.id });
    // $1 a day at this time of day for a week; today $2.50 so far: 2.5 times, under a rule of 3.
    for (let i = 1; i <= 7; i++) logCall(1, t0 - i * 86_400);
    logCall(2.5, t0);
    await sync(50, 9);
    await api.alerts.createRule({ kind: "spend_spike", account: accountId, threshold: 3 });
    // Evaluated right after the syncs (a later moment could fall into the next day).
    const t = (t0 + 21) * 1000;
    await evaluateAlerts(store.db, new Date(t));
    await evaluateAlerts(store.db, new Date(t + 1000));
    expect((await api.alerts.list({ state: "open" })).data.total).toBe(0);
    // Another $2.50: 5 times.
    logCall(2.5, t0 + 15);
    await sync(47.5, 9);
    await evaluateAlerts(store.db, new Date(t + 2000));
    await evaluateAlerts(store.db, new Date(t + 3000));
    const open = await api.alerts.list({ state: "open" });
    expect(open.data.alerts.map((a) => [a.message, a.value])).toEqual([
      ["今日到此刻消费 $5.00，是近 7 天同一时刻中位数 $1.00 的 5.0 倍", 5],
    ]);
  });
});

describe("the outbox", () => {
  it("retries a channel that is down until it answers, never holding up another; each event once", async () => {
    const { api, accountId, sync } = await workspace();
    let down = true;
    const flaky = await receiver(() => (down ? 500 : 200));
    // Slow to answer: the other instance looks while the message is on its way.
    const steady = await receiver(() => 200, 300);
    closers.push(flaky.close, steady.close);
    const a = await api.alerts.createChannel({ type: "webhook", name: "会失败的", url: flaky.url });
    const b = await api.alerts.createChannel({ type: "webhook", name: "正常的", url: steady.url });
    if (!a.success || !b.success) throw new Error("channels");
    await api.alerts.createRule({
      kind: "balance_below",
      account: accountId,
      threshold: 5,
      channels: [a.data.channel.id, b.data.channel.id],
    });
    await sync(1);
    const t = Date.now();
    await evaluateAlerts(store.db, minutes(0, t));
    await evaluateAlerts(store.db, minutes(1, t));
    // Two instances at once, each message claimed by one of them; on PostgreSQL each instance has its
    // own connections (a SQLite store is one process's).
    const other = store.kind === "postgres" ? createDb(store.url) : store.db;
    if (other !== store.db) closers.push(() => closeDb(other));
    await other.alertDelivery.count();
    const [x, y] = await Promise.all([deliverDue(store.db, minutes(1, t)), deliverDue(other, minutes(1, t))]);
    expect(x + y).toBe(1);
    expect(events(steady)).toEqual(["opened"]);
    expect(flaky.received).toHaveLength(0);
    let list = await api.alerts.list({});
    const failing = list.data.alerts[0]?.deliveries.find((d) => d.channelId === a.data.channel.id);
    expect(failing).toMatchObject({ status: "pending", attempts: 1, lastError: "对方答复 HTTP 500" });
    // Not before its retry time; then delivered once the channel is back.
    expect(await deliverDue(store.db, minutes(1.5, t))).toBe(0);
    down = false;
    expect(await deliverDue(store.db, minutes(2.1, t))).toBe(1);
    expect(events(flaky)).toEqual(["opened"]);
    expect(events(steady)).toEqual(["opened"]);
    list = await api.alerts.list({});
    expect(list.data.alerts[0]?.deliveries.map((d) => d.status)).toEqual(["sent", "sent"]);
  });

  it("tests a channel on request: delivered or not, a few times a minute, never why a connection failed", async () => {
    const { api } = await workspace();
    // The tests below are counted in one minute: begin with most of a minute ahead.
    const into = Date.now() % 60_000;
    if (into > 40_000) await new Promise((r) => setTimeout(r, 60_000 - into));
    const hook = await receiver();
    closers.push(hook.close);
    const ok = await api.alerts.createChannel({ type: "webhook", name: "测试", url: hook.url, secret: "s".repeat(20) });
    if (!ok.success) throw new Error(ok.message);
    expect(ok.data.secret).toBe("s".repeat(20));
    expect(await api.alerts.testChannel({ id: ok.data.channel.id })).toEqual({
      success: true,
      data: { message: "测试消息已送达" },
    });
    expect(events(hook)).toEqual(["test"]);
    await hook.close();
    closers.pop();
    const gone = await api.alerts.testChannel({ id: ok.data.channel.id });
    expect(gone).toEqual({ success: false, message: "测试消息未送达" });
    // A receiver that answers: its status, nothing more.
    const teapot = await receiver(() => 418);
    closers.push(teapot.close);
    const refusing = await api.alerts.createChannel({ type: "webhook", name: "茶壶", url: teapot.url });
    if (!refusing.success) throw new Error(refusing.message);
    expect(await api.alerts.testChannel({ id: refusing.data.channel.id })).toEqual({
      success: false,
      message: "测试消息未送达（对方答复 HTTP 418）",
    });
    // Ten tests a minute per workspace (three sent above); then told to wait, nothing sent.
    for (let i = 0; i < 7; i++) {
      expect((await api.alerts.testChannel({ id: refusing.data.channel.id })).success).toBe(false);
    }
    await expect(api.alerts.testChannel({ id: refusing.data.channel.id })).rejects.toMatchObject({
      code: "TOO_MANY_REQUESTS",
      message: expect.stringMatching(/^测试过于频繁：每分钟最多 10 次，请 \d+ 秒后再试$/) as unknown,
    });
    const bad = await api.alerts.createChannel({ type: "webhook", name: "坏的", url: "ftp://example.com/x" });
    expect(bad).toEqual({ success: false, message: "地址不能用：地址须以 http:// 或 https:// 开头" });
    const channels = await api.alerts.channels();
    expect(JSON.stringify(channels)).not.toContain("s".repeat(20));
  });

  it("keeps a channel's settings sealed, and moves them to a new vault key on vault-reseal", async () => {
    const k1 = "vault-key-one-0123456789abcdefghijklmnop";
    const k2 = "vault-key-two-0123456789abcdefghijklmnop";
    setVaultKeys(JSON.stringify({ "1": k1 }));
    try {
      const { api } = await workspace();
      const hook = await receiver();
      closers.push(hook.close);
      const made = await api.alerts.createChannel({ type: "webhook", name: "轮换", url: hook.url });
      if (!made.success) throw new Error(made.message);
      const read = () =>
        store.db.alertChannel.findUniqueOrThrow({ where: { id: made.data.channel.id }, select: { settings: true } });
      expect((await read()).settings).toMatch(/^v1\.k1\./);
      expect((await read()).settings).not.toContain("127.0.0.1");
      setVaultKeys(JSON.stringify({ "1": k1, "2": k2 }));
      expect(await resealAlertChannels(store.db)).toEqual({ resealed: 1, current: 0, unopenable: 0 });
      expect((await read()).settings).toMatch(/^v1\.k2\./);
      setVaultKeys(JSON.stringify({ "2": k2 }));
      expect((await api.alerts.testChannel({ id: made.data.channel.id })).success).toBe(true);
    } finally {
      setVaultKeys(undefined);
    }
  });
});
