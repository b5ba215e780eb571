import { createHmac } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiUser, startGateway, type RunningGateway } from "../../src/demo/gateway";
import { deliverDue } from "../../src/server/alerts/deliver";
import { evaluateAlerts } from "../../src/server/jobs/alerts";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import { tempStore, type TempDb } from "../support/db";

/**
 * Every kind of channel against a local stand-in of its service: Telegram's bot API, WeCom,
 * DingTalk (its signing checked) and Feishu (its signing checked) robots, ntfy, and an SMTP sink;
 * each takes a test message and a real alert in Chinese, and each service's refusal is said in words.
 */

type Hit = { path: string; query: URLSearchParams; headers: IncomingHttpHeaders; body: string };

const DING_SECRET = "SEC0123456789abcdef0123456789abcdef";
const FEISHU_SECRET = "feishu-secret-123";
const hits: Hit[] = [];
const mails: string[] = [];
let robots: Server;
let smtp: SMTPServer;
let store: TempDb;
let site: RunningGateway;

/** The services' answers, as each family of robot sends them. */
function answer(hit: Hit): { status: number; body: unknown } {
  const telegram = /^\/bot([^/]+)\/sendMessage$/.exec(hit.path);
  if (telegram) {
    return telegram[1]?.startsWith("999")
      ? { status: 200, body: { ok: false, error_code: 400, description: "Bad Request: chat not found" } }
      : { status: 200, body: { ok: true, result: { message_id: 1 } } };
  }
  if (hit.path === "/cgi-bin/webhook/send") {
    return hit.query.get("key") === "bad-key-0000"
      ? { status: 200, body: { errcode: 93000, errmsg: "invalid webhook url" } }
      : { status: 200, body: { errcode: 0, errmsg: "ok" } };
  }
  if (hit.path === "/robot/send") {
    const ts = hit.query.get("timestamp") ?? "";
    const expected = createHmac("sha256", DING_SECRET).update(`${ts}\n${DING_SECRET}`).digest("base64");
    return hit.query.get("sign") === expected
      ? { status: 200, body: { errcode: 0, errmsg: "ok" } }
      : { status: 200, body: { errcode: 310000, errmsg: "sign not match" } };
  }
  if (hit.path.startsWith("/open-apis/bot/v2/hook/")) {
    const body = JSON.parse(hit.body) as { timestamp?: string; sign?: string };
    const expected = createHmac("sha256", `${body.timestamp}\n${FEISHU_SECRET}`).update("").digest("base64");
    return body.sign === expected
      ? { status: 200, body: { code: 0, msg: "success" } }
      : {
          status: 200,
          body: { code: 19021, msg: "sign match fail or timestamp is not within one hour from current time" },
        };
  }
  if (hit.path.startsWith("/ntfy/")) return { status: 200, body: { id: "x" } };
  return { status: 404, body: {} };
}

beforeAll(async () => {
  robots = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://robots");
      const hit = {
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      hits.push(hit);
      const { status, body } = answer(hit);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => robots.listen(0, "127.0.0.1", resolve));
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push(Buffer.concat(chunks).toString());
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(robots.address() as AddressInfo).port}`;
  // The services' addresses are the operator's settings: here, the local stand-ins.
  Object.assign(process.env, {
    ALERT_ALLOW_PRIVATE: "1",
    TELEGRAM_API_URL: base,
    WECOM_API_URL: base,
    DINGTALK_API_URL: base,
    FEISHU_API_URL: base,
    SMTP_URL: `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`,
    SMTP_FROM: "网关控制台 <alerts@example.com>",
  });
  store = await tempStore();
  site = await startGateway({
    family: "new-api",
    users: [{ accessToken: "sk-channels-0123456789abcdef01", data: newApiUser(801, { display_name: "渠道号" }) }],
  });
});
afterAll(async () => {
  await site?.close();
  await new Promise<void>((resolve) => robots.close(() => resolve()));
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await store?.cleanup();
});

let made = 0;
async function workspace() {
  made++;
  const siteId =
    (await siteRegistry(store.db).list()).find((s) => s.url === site.url)?.id ??
    (await siteRegistry(store.db).add({ name: "渠道站", url: site.url })).id;
  const { api: anon } = callerFor(store.db, {}, { clientAddress: `198.51.100.${made}` });
  const registered = await anon.workspace.register({ name: `渠道工作区 ${made}`, password: "correct horse battery" });
  const { api } = callerFor(store.db, bearer(registered.data.token), { ledgerSyncMinutes: 0 });
  const saved = await api.workspace.addAccount({ siteId, userId: 801, accessToken: "sk-channels-0123456789abcdef01" });
  if (!saved.success) throw new Error(saved.message);
  return { api, accountId: saved.data.account.id };
}

describe("alert channels", () => {
  it("sends a test and a real alert to every kind, in Chinese, signed where the service signs", async () => {
    const { api, accountId } = await workspace();
    const base = process.env.TELEGRAM_API_URL ?? "";
    const inputs = [
      { type: "email", name: "邮件", to: "ops@example.com" },
      { type: "telegram", name: "电报", botToken: "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ", chatId: "-100123" },
      { type: "ntfy", name: "ntfy", url: `${base}/ntfy/gateway-alerts`, token: "tk_abc" },
      {
        type: "wecom",
        name: "企业微信",
        url: "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a91f6-7xxx-4bc4-97a0",
      },
      {
        type: "dingtalk",
        name: "钉钉",
        url: "https://oapi.dingtalk.com/robot/send?access_token=abcdef0123456789",
        secret: DING_SECRET,
      },
      {
        type: "feishu",
        name: "飞书",
        url: "https://open.feishu.cn/open-apis/bot/v2/hook/0a1b2c3d-4e5f",
        secret: FEISHU_SECRET,
      },
    ] as const;
    const ids: number[] = [];
    for (const input of inputs) {
      const made = await api.alerts.createChannel(input);
      if (!made.success) throw new Error(`${input.type}: ${made.message}`);
      expect(made.data.secret).toBeNull();
      ids.push(made.data.channel.id);
      const tested = await api.alerts.testChannel({ id: made.data.channel.id });
      expect(tested, input.type).toEqual({ success: true, data: { message: "测试消息已送达" } });
    }
    // Shown without their secrets: the robots by the end of their token only.
    const shown = (await api.alerts.channels()).data.channels;
    expect(shown.map((c) => c.target)).toEqual([
      "ops@example.com",
      "Telegram -100123",
      `${base}/ntfy/gateway-alerts`,
      "企业微信机器人 …97a0",
      "钉钉机器人 …6789（加签）",
      "飞书机器人 …4e5f（签名校验）",
    ]);
    expect(JSON.stringify(shown)).not.toMatch(/ABCDEFGHIJ|tk_abc|SEC0123|feishu-secret/);

    // A real alert: the token refused, opened after two evaluations, delivered to all six.
    await api.alerts.createRule({ kind: "token_refused", account: "all", channels: ids });
    await store.db.workspaceAccount.updateMany({ where: { id: accountId }, data: { state: "reauth" } });
    hits.length = 0;
    mails.length = 0;
    const t = Date.now();
    await evaluateAlerts(store.db, new Date(t));
    await evaluateAlerts(store.db, new Date(t + 60_000));
    expect(await deliverDue(store.db, new Date(t + 60_000))).toBe(6);
    const title = "【提醒】站点拒绝令牌 · 渠道号（渠道站）";

    expect(mails).toHaveLength(1);
    expect(mails[0]).toContain("To: ops@example.com");
    expect(mails[0]).toMatch(/Subject: =\?UTF-8\?/);
    expect(mails[0]).toContain("Content-Transfer-Encoding");

    const tg = hits.find((h) => h.path.startsWith("/bot"))!;
    expect(tg.path).toBe("/bot123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ/sendMessage");
    expect(JSON.parse(tg.body)).toMatchObject({ chat_id: "-100123", text: expect.stringContaining(title) as unknown });

    const ntfy = hits.find((h) => h.path.startsWith("/ntfy/"))!;
    expect(ntfy.body).toContain("站点拒绝了保存的访问令牌，需要重新授权");
    expect(ntfy.headers.authorization).toBe("Bearer tk_abc");
    expect(ntfy.headers.priority).toBe("high");
    expect(ntfy.headers.title).toBe(`=?UTF-8?B?${Buffer.from(title).toString("base64")}?=`);

    const wecom = hits.find((h) => h.path === "/cgi-bin/webhook/send")!;
    expect(wecom.query.get("key")).toBe("693a91f6-7xxx-4bc4-97a0");
    expect(JSON.parse(wecom.body)).toMatchObject({
      msgtype: "markdown",
      markdown: { content: expect.stringContaining("站点拒绝令牌") as unknown },
    });

    const ding = hits.find((h) => h.path === "/robot/send")!;
    expect(ding.query.get("access_token")).toBe("abcdef0123456789");
    expect(JSON.parse(ding.body)).toMatchObject({ msgtype: "markdown", markdown: { title } });

    const feishu = hits.find((h) => h.path.startsWith("/open-apis/"))!;
    expect(feishu.path).toBe("/open-apis/bot/v2/hook/0a1b2c3d-4e5f");
    expect(JSON.parse(feishu.body)).toMatchObject({
      msg_type: "text",
      content: { text: expect.stringContaining(title) as unknown },
    });

    const list = await api.alerts.list({});
    expect(list.data.alerts[0]?.deliveries.map((d) => d.status)).toEqual(Array(6).fill("sent"));
  });

  it("says each service's refusal in words, and refuses bad settings before saving", async () => {
    const { api } = await workspace();
    const wecom = await api.alerts.createChannel({ type: "wecom", name: "坏的", token: "bad-key-0000" });
    if (!wecom.success) throw new Error(wecom.message);
    expect(await api.alerts.testChannel({ id: wecom.data.channel.id })).toEqual({
      success: false,
      message: "对方拒绝：invalid webhook url",
    });
    const ding = await api.alerts.createChannel({
      type: "dingtalk",
      name: "错的密钥",
      token: "abcdef0123456789",
      secret: "SEC" + "0".repeat(32),
    });
    if (!ding.success) throw new Error(ding.message);
    expect(await api.alerts.testChannel({ id: ding.data.channel.id })).toEqual({
      success: false,
      message: "对方拒绝：sign not match",
    });
    const tg = await api.alerts.createChannel({
      type: "telegram",
      name: "找不到",
      botToken: "999999:ABCDEFGHIJKLMNOPQRSTUVWXYZ",
      chatId: "42",
    });
    if (!tg.success) throw new Error(tg.message);
    expect(await api.alerts.testChannel({ id: tg.data.channel.id })).toEqual({
      success: false,
      message: "Telegram 拒绝：Bad Request: chat not found",
    });
    for (const [input, message] of [
      [{ type: "email", name: "x", to: "not-an-address" }, "请填写有效的邮箱地址"],
      [{ type: "telegram", name: "x", botToken: "nope", chatId: "1" }, "请填写 Bot Token（形如 123456:ABC…）"],
      [
        { type: "wecom", name: "x", url: "https://qyapi.weixin.qq.com/cgi-bin/webhook/send" },
        "请填写企业微信机器人的 key（可直接粘贴机器人的 Webhook 地址）",
      ],
      [{ type: "dingtalk", name: "x", token: "abcdef0123456789", secret: "nope" }, "加签密钥应以 SEC 开头"],
      [{ type: "ntfy", name: "x", url: "https://ntfy.sh/" }, "ntfy 地址须包含主题，如 https://ntfy.sh/my-topic"],
    ] as const) {
      expect(await api.alerts.createChannel(input), input.type).toEqual({ success: false, message });
    }
  });
});
