import { createHmac } from "node:crypto";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type GatewayUser, type RunningGateway } from "../../src/demo/gateway";
import { accountOf } from "../../src/server/accounts/overview";
import { deliverDue } from "../../src/server/alerts/deliver";
import { lastOccurrence, queueDueDigests } from "../../src/server/alerts/digests";
import { pruneAlertHistory } from "../../src/server/alerts/history";
import { freshProcessState } from "../../src/server/core/process-state";
import { addDays, dayIn, dayStart } from "../../src/server/core/time";
import { syncLedger } from "../../src/server/ledger/sync";
import { sessionStore } from "../../src/server/session/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/**
 * Digests end to end: a stand-in site with a known consume log over two days, the ledger synced,
 * the digests queued as the runner does at a later time, delivered to a webhook receiver (signature
 * checked) and an SMTP sink (the monthly statement attached, parsed back), and the one-time link.
 */

type Received = { headers: IncomingHttpHeaders; body: string };

let store: TempDb;
let site: RunningGateway;
let hook: { url: string; received: Received[]; server: Server };
let smtp: SMTPServer;
const mails: Buffer[] = [];

const USER: GatewayUser = {
  accessToken: "sk-digests-0123456789abcdef012",
  data: newApiUser(901, { username: "digest", display_name: "摘要号", quota: 5_000_000 }),
  logs: [],
};

/** A zone where it is now between 10:00 and 14:00: "today" has hours behind it and ahead of it. */
function middayZone(now: number): string {
  const hour = new Date(now).getUTCHours();
  const offset = 12 - hour;
  const wrapped = offset > 12 ? offset - 24 : offset < -12 ? offset + 24 : offset;
  // Etc/GMT-8 is UTC+8 (the sign is the other way round).
  return wrapped === 0 ? "UTC" : `Etc/GMT${wrapped > 0 ? "-" : "+"}${Math.abs(wrapped)}`;
}

beforeAll(async () => {
  hook = await new Promise((resolve) => {
    const received: Received[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
        res.writeHead(200);
        res.end();
      });
    });
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, server }),
    );
  });
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push(Buffer.concat(chunks));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  Object.assign(process.env, {
    ALERT_ALLOW_PRIVATE: "1",
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    SMTP_FROM: "网关控制台 <alerts@example.com>",
  });
  store = await tempStore();
  site = await startGateway({ family: "new-api", users: [USER] });
});
afterAll(async () => {
  await site?.close();
  await new Promise<void>((resolve) => hook.server.close(() => resolve()));
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await store?.cleanup();
});

const call = (at: number, model: string, usd: number) => ({
  createdAt: at,
  type: 2,
  model,
  tokenName: "脚本",
  tokenId: 1,
  quota: Math.round(usd * 500_000),
  promptTokens: 1000,
  completionTokens: 500,
  durationMs: 900,
  stream: false,
  content: "",
});

let addresses = 0;

/** A workspace in `tz` with the account saved, its log of today and yesterday synced, and two channels. */
async function workspace(tz: string) {
  // Each test's digests are the only ones due, and its ledger holds only its own log (an entry
  // keeps the time it was first synced with, and each test places the log in its own zone).
  await store.db.alertDigest.deleteMany({});
  await store.db.ledgerEntry.deleteMany({});
  await store.db.ledgerHour.deleteMany({});
  await store.db.ledgerHourTotal.deleteMany({});
  await store.db.ledgerSync.deleteMany({});
  const now = Date.now();
  const today = dayIn(tz, now);
  const at = (day: string, hour: number) => Math.floor(dayStart(tz, day) / 1000) + hour * 3600;
  USER.logs = [
    call(at(addDays(today, -1), 3), "gpt-4o", 2),
    call(at(today, 1), "gpt-4o", 3),
    call(at(today, 2), "claude-sonnet-4", 1),
  ];
  USER.data.quota = 10 * 500_000;
  const siteId =
    (await siteRegistry(store.db).list()).find((s) => s.url === site.url)?.id ??
    (await siteRegistry(store.db).add({ name: "摘要站", url: site.url })).id;
  // Each from its own address: an address may create three workspaces an hour.
  const { api: anon } = callerFor(store.db, {}, { clientAddress: `198.51.100.${++addresses}` });
  const registered = await anon.workspace.register({
    name: `摘要工作区 ${Math.random().toString(36).slice(2, 8)}`,
    password: "correct horse battery",
  });
  const { api } = callerFor(store.db, bearer(registered.data.token), {
    ledgerSyncMinutes: 0,
    origin: "https://dash.example.com",
  });
  const saved = await api.workspace.addAccount({ siteId, userId: 901, accessToken: USER.accessToken });
  if (!saved.success) throw new Error(saved.message);
  await api.alerts.setTimeZone({ timeZone: tz });
  freshProcessState();
  const row = await store.db.workspaceAccount.findFirst({
    where: { id: saved.data.account.id },
    select: { sessionId: true },
  });
  const session = await sessionStore(store.db).findLiveById(row?.sessionId ?? "", new Date());
  if (!session) throw new Error("no session");
  await syncLedger(
    store.db,
    accountOf(session),
    { db: store.db, timeoutMs: 5000, perMinute: 100_000 },
    {
      backfillDays: 3,
      now: Math.floor(now / 1000),
    },
  );
  const webhook = await api.alerts.createChannel({ type: "webhook", name: "钩子", url: hook.url });
  const email = await api.alerts.createChannel({ type: "email", name: "邮件", to: "me@example.com" });
  if (!webhook.success || !email.success) throw new Error("channels");
  return { api, today, webhook: webhook.data, email: email.data.channel.id };
}

type DigestBody = {
  event: string;
  digest: {
    title: string;
    text: string;
    markdown: string;
    figures: {
      period: { from: string; to: string };
      previous: { from: string; to: string };
      totals: { usd: number; previousUsd: number };
      accounts: Array<{ name: string; usd: number; previousUsd: number; balanceUsd: number; daysLeft: number }>;
      models: Array<{ model: string; usd: number; previousUsd: number }>;
      statement: { month: string; url: string | null; attached: boolean } | null;
    };
  };
};

describe("digests", () => {
  it("are set per cadence with their time, and refused in words when wrong", async () => {
    const { api, webhook } = await workspace("UTC");
    const id = webhook.channel.id;
    expect(await api.alerts.setDigest({ cadence: "daily", time: "25:00", channels: [id] })).toEqual({
      success: false,
      message: "发送时间须是 00:00 到 23:59 之间的时刻",
    });
    expect(await api.alerts.setDigest({ cadence: "daily", time: "09:00", channels: [] })).toEqual({
      success: false,
      message: "请至少选择一个通知渠道",
    });
    expect(await api.alerts.setDigest({ cadence: "daily", time: "09:00", channels: [99_999] })).toEqual({
      success: false,
      message: "没有这个通知渠道",
    });
    const weekly = await api.alerts.setDigest({ cadence: "weekly", time: "8:30", weekday: 5, channels: [id] });
    expect(weekly).toMatchObject({ success: true, data: { digest: { cadence: "weekly", time: "08:30", weekday: 5 } } });
    // Setting it again changes it: one digest per cadence.
    await api.alerts.setDigest({ cadence: "weekly", time: "07:00", weekday: 1, channels: [id] });
    const list = await api.alerts.digests();
    expect(list.data.digests.map((d) => [d.cadence, d.time, d.weekday])).toEqual([["weekly", "07:00", 1]]);
    // The channel removed: the digest left with none goes too.
    await api.alerts.removeChannel({ id });
    expect((await api.alerts.digests()).data.digests).toEqual([]);
  });

  it("schedule by the workspace's zone: daily the day before, weekly the 7 days before, monthly the month before", () => {
    // 2026-11-24 is a Tuesday; 01:30 UTC is 09:30 in Shanghai.
    const now = new Date("2026-11-24T01:30:00Z");
    const tz = "Asia/Shanghai";
    expect(lastOccurrence({ cadence: "daily", minute: 9 * 60, weekday: null }, tz, now)).toMatchObject({
      period: { from: "2026-11-23", to: "2026-11-23" },
      at: new Date("2026-11-24T01:00:00Z"),
    });
    // 10:00 has not come yet in Shanghai: the last one was yesterday's.
    expect(lastOccurrence({ cadence: "daily", minute: 10 * 60, weekday: null }, tz, now).period).toEqual({
      from: "2026-11-22",
      to: "2026-11-22",
    });
    expect(lastOccurrence({ cadence: "weekly", minute: 9 * 60, weekday: 1 }, tz, now)).toMatchObject({
      period: { from: "2026-11-16", to: "2026-11-22" },
    });
    expect(lastOccurrence({ cadence: "monthly", minute: 0, weekday: null }, tz, now)).toMatchObject({
      period: { from: "2026-10-01", to: "2026-10-31" },
      key: "2026-10",
    });
  });

  it("sends the day's spend by account and model against the day before, once, signed", async () => {
    const tz = middayZone(Date.now());
    const { api, today, webhook } = await workspace(tz);
    hook.received.length = 0;
    const set = await api.alerts.setDigest({ cadence: "daily", time: "00:00", channels: [webhook.channel.id] });
    expect(set.success).toBe(true);
    // Set now: today's 00:00 has passed, so nothing is sent for yesterday; tomorrow's covers today.
    expect(await queueDueDigests(store.db)).toBe(0);
    const tomorrow = new Date(Date.now() + 86_400_000);
    // Two runners at once: the period is claimed by one.
    const queued = await Promise.all([queueDueDigests(store.db, tomorrow), queueDueDigests(store.db, tomorrow)]);
    expect(queued.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await queueDueDigests(store.db, tomorrow)).toBe(0);
    expect(await deliverDue(store.db, tomorrow)).toBe(1);
    expect(hook.received).toHaveLength(1);
    const { headers, body } = hook.received[0]!;
    const signature = createHmac("sha256", webhook.secret ?? "")
      .update(`${String(headers["x-gd-timestamp"])}.${body}`)
      .digest("hex");
    expect(headers["x-gd-signature"]).toBe(`sha256=${signature}`);
    const sent = JSON.parse(body) as DigestBody;
    expect(sent.event).toBe("digest");
    const f = sent.digest.figures;
    expect(f.period).toEqual({ from: today, to: today });
    expect(f.previous).toEqual({ from: addDays(today, -1), to: addDays(today, -1) });
    expect(f.totals).toEqual({ usd: 4, previousUsd: 2 });
    expect(f.models).toEqual([
      { model: "gpt-4o", usd: 3, previousUsd: 2 },
      { model: "claude-sonnet-4", usd: 1, previousUsd: 0 },
    ]);
    // $10 left at $6 over the last 7 days: 11.7 days.
    expect(f.accounts).toMatchObject([{ name: "摘要号", usd: 4, previousUsd: 2, balanceUsd: 10, daysLeft: 11.7 }]);
    expect(sent.digest.title).toBe(`【日报】${today} 消费 $4.00`);
    expect(sent.digest.text).toContain(`${today}（${tz}）消费 $4.00，前一日 $2.00（+100%）`);
    expect(sent.digest.text).toContain("- gpt-4o：$3.00（+50%）");
    expect(sent.digest.text).toContain("- claude-sonnet-4：$1.00（新增）");
    expect(sent.digest.text).toContain("- 摘要号（摘要站）：$4.00（+100%），余额 $10.00，约可用 11.7 天");
    expect(sent.digest.markdown).toContain("**按模型**");
  });

  it("queues 立即发送 once however often it is clicked at once, covering the workspace's yesterday", async () => {
    const { api, webhook, today } = await workspace(middayZone(Date.now()));
    // Its moment (late in the day) has not come today: 立即发送 still covers yesterday.
    const set = await api.alerts.setDigest({ cadence: "daily", time: "23:59", channels: [webhook.channel.id] });
    if (!set.success) throw new Error(set.message);
    const id = set.data.digest.id;
    const queued = () => store.db.alertDelivery.count({ where: { digestId: id } });
    const before = await queued();
    // A double click: two calls at once, and a third right after the answer.
    const [first, second] = await Promise.all([api.alerts.sendDigest({ id }), api.alerts.sendDigest({ id })]);
    expect(first).toMatchObject({ success: true });
    expect(second).toEqual(first);
    expect(await api.alerts.sendDigest({ id })).toEqual(first);
    expect(await queued()).toBe(before + 1);
    const sent = await store.db.alertDelivery.findFirst({ where: { digestId: id }, orderBy: { id: "desc" } });
    const period = (JSON.parse(sent?.payload ?? "{}") as DigestBody).digest.figures.period;
    expect(period).toEqual({ from: addDays(today, -1), to: addDays(today, -1) });
    // Sent, so the next test's queue holds only its own.
    expect(await deliverDue(store.db)).toBe(1);
  });

  it("sends the month with its statement: attached to email, a one-time link elsewhere", async () => {
    const tz = middayZone(Date.now());
    const { api, today, webhook, email } = await workspace(tz);
    hook.received.length = 0;
    mails.length = 0;
    await api.alerts.setDigest({ cadence: "monthly", time: "00:00", channels: [webhook.channel.id, email] });
    const month = today.slice(0, 7);
    // The 1st of next month, a minute past midnight in the zone.
    const first = addDays(`${month}-28`, 5).slice(0, 8) + "01";
    const then = new Date(dayStart(tz, first) + 60_000);
    expect(await queueDueDigests(store.db, then)).toBe(1);
    // The queued message holds no link yet: it is made as the message goes.
    const stored = async () => JSON.stringify(await store.db.alertDelivery.findMany({ select: { payload: true } }));
    expect(await stored()).not.toMatch(/statement\/[A-Za-z0-9_-]{43}/);
    expect(await deliverDue(store.db, then)).toBe(2);

    const sent = JSON.parse(hook.received[0]!.body) as DigestBody;
    expect(sent).not.toHaveProperty("link");
    expect(sent.digest.figures.period).toEqual({ from: `${month}-01`, to: addDays(first, -1) });
    const url = sent.digest.figures.statement?.url ?? "";
    expect(url).toMatch(/^https:\/\/dash\.example\.com\/statement\/[A-Za-z0-9_-]{43}$/);
    expect(sent.digest.text).toContain(`${month} 的对账单：${url}（7 天内有效，只能下载一次）`);
    const token = url.split("/").pop() ?? "";
    // Sent, and still only its SHA-256 is kept here.
    expect(await stored()).not.toContain(token);
    const anon = callerFor(store.db).api;
    expect((await anon.alerts.statementLink({ token })).data).toMatchObject({ state: "ready", month });
    const file = await anon.alerts.statementByLink({ token });
    if (!file.success) throw new Error(file.message);
    const pdf = Buffer.from(await new Response(file.data.body as ReadableStream).arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe("%PDF-");
    const path = join(store.dir, "linked.pdf");
    writeFileSync(path, pdf);
    const text = execFileSync("pdftotext", ["-layout", path, "-"]).toString();
    expect(text).toContain(month);
    expect(text).toContain("claude-sonnet-4");
    // Once only; a wrong or made-up link is no link.
    expect(await anon.alerts.statementByLink({ token })).toEqual({
      success: false,
      message: "这个链接已经用过：对账单只能通过链接下载一次，请在控制台的「导出」中下载",
    });
    expect((await anon.alerts.statementLink({ token })).data.state).toBe("used");
    expect((await anon.alerts.statementLink({ token: `${token.slice(0, -1)}x` })).data.state).toBe("unknown");

    // The email carries the same month's statement as a PDF attachment.
    expect(mails).toHaveLength(1);
    const mail = await simpleParser(mails[0]!);
    expect(mail.subject).toContain(`【月报】${month}`);
    expect(mail.text).toContain(`${month} 的对账单见附件（PDF）`);
    expect(mail.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      [`statement_${month}.pdf`, "application/pdf"],
    ]);
    const attached = join(store.dir, "attached.pdf");
    writeFileSync(attached, mail.attachments[0]!.content);
    expect(execFileSync("pdftotext", ["-layout", attached, "-"]).toString()).toContain("gpt-4o");
  });

  it("prunes resolved alerts and sent digests past keeping, never an open one", async () => {
    // Past keeping for the newest message too (the month's was queued for the 1st of next month).
    const newest = await store.db.alertDelivery.aggregate({ _max: { createdAt: true } });
    const later = new Date(Math.max(Date.now(), newest._max.createdAt?.getTime() ?? 0) + 200 * 86_400_000);
    const before = await store.db.alertDelivery.count({ where: { alertId: null } });
    expect(before).toBeGreaterThan(0);
    await pruneAlertHistory(store.db, later);
    expect(await store.db.alertDelivery.count({ where: { alertId: null } })).toBe(0);
  });
});
