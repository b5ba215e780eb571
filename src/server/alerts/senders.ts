/**
 * How each kind of channel is sent to (docs/design.md 21): a signed JSON webhook; email over the
 * operator's SMTP (`nodemailer`); a Telegram bot; ntfy; and the group robots Chinese teams use
 * (WeCom 企业微信, DingTalk 钉钉 with its signing, Feishu 飞书 with its signing). Addresses a person
 * gives (webhook, ntfy) are checked against internal ranges; the robots' and Telegram's base
 * addresses are the operator's settings. Every send is bounded in time and size and follows no
 * redirect; a refusal says why in words.
 */
import { createHmac } from "node:crypto";
import nodemailer from "nodemailer";
import { env } from "../core/env";
import { OutboundRefused, postOutbound, type OutboundAnswer } from "../net/outbound";
import { clip, renderMarkdown, renderText, renderTitle, type EventPayload } from "./render";

export const CHANNEL_TYPES = ["webhook", "email", "telegram", "ntfy", "wecom", "dingtalk", "feishu"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

export type ChannelSettings =
  | { type: "webhook"; url: string; secret: string }
  | { type: "email"; to: string }
  | { type: "telegram"; botToken: string; chatId: string }
  | { type: "ntfy"; url: string; token: string }
  | { type: "wecom"; key: string }
  | { type: "dingtalk"; accessToken: string; secret: string }
  | { type: "feishu"; hookId: string; secret: string };

/** Why a message was not taken, in words (the delivery keeps it and tries again later). */
export class SendRefused extends Error {}

const limits = (allowPrivate: boolean) => ({ timeoutMs: env().ALERT_TIMEOUT_MS, maxBytes: 64 * 1024, allowPrivate });

async function post(url: string, body: string, headers: Record<string, string>, operatorsAddress: boolean) {
  let answer: OutboundAnswer;
  try {
    // An address the operator set (a robot's or Telegram's base) may be anywhere they chose.
    answer = await postOutbound(url, body, headers, limits(operatorsAddress || env().ALERT_ALLOW_PRIVATE));
  } catch (error) {
    if (error instanceof OutboundRefused) throw new SendRefused(error.message);
    const code = (error as { code?: string }).code;
    throw new SendRefused(code === "ECONNREFUSED" ? "连接被拒绝" : code ? `无法连接（${code}）` : "无法连接");
  }
  if (answer.status >= 300 && answer.status < 400)
    throw new SendRefused(`对方要求重定向（HTTP ${answer.status}），不跟随`);
  if (answer.status < 200 || answer.status >= 300) throw new SendRefused(`对方答复 HTTP ${answer.status}`);
  return answer;
}

/** The robots answer 200 with their own code: 0 is taken, anything else is their reason. */
function robotAnswer(answer: OutboundAnswer, codeKey: string, messageKey: string): void {
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    throw new SendRefused("对方的答复无法识别");
  }
  const code = data[codeKey] ?? data.StatusCode;
  if (code !== 0) throw new SendRefused(`对方拒绝：${String(data[messageKey] ?? data.StatusMessage ?? code)}`);
}

const base = (url: string) => url.replace(/\/+$/, "");

/** A file sent with an email (a monthly digest's statement). */
export type Attachment = { filename: string; content: Buffer; contentType: string };

/** The chat services' message limits (bytes of UTF-8, a little under theirs). */
const LIMIT = { telegram: 4000, ntfy: 4000, wecom: 4000, dingtalk: 18_000, feishu: 18_000 } as const;

export async function sendWith(
  settings: ChannelSettings,
  payload: string,
  now: number,
  attachments: Attachment[] = [],
): Promise<void> {
  const event = JSON.parse(payload) as EventPayload;
  const json = { "content-type": "application/json" };
  switch (settings.type) {
    case "webhook": {
      const timestamp = String(Math.floor(now / 1000));
      const signature = createHmac("sha256", settings.secret).update(`${timestamp}.${payload}`).digest("hex");
      await post(
        settings.url,
        payload,
        {
          ...json,
          "user-agent": "gateway-dashboard-alerts",
          "x-gd-event": event.event,
          "x-gd-timestamp": timestamp,
          "x-gd-signature": `sha256=${signature}`,
        },
        false,
      );
      return;
    }
    case "email": {
      const e = env();
      if (!e.SMTP_URL) throw new SendRefused("运营方未配置邮件服务（SMTP_URL）");
      const transport = nodemailer.createTransport(e.SMTP_URL, {
        connectionTimeout: e.ALERT_TIMEOUT_MS,
        greetingTimeout: e.ALERT_TIMEOUT_MS,
        socketTimeout: e.ALERT_TIMEOUT_MS,
      });
      try {
        await transport.sendMail({
          from: e.SMTP_FROM,
          to: settings.to,
          subject: renderTitle(event),
          text: renderText(event),
          attachments,
        });
      } catch (error) {
        throw new SendRefused(`邮件未发出：${(error as Error).message.slice(0, 200)}`);
      } finally {
        transport.close();
      }
      return;
    }
    case "telegram": {
      // A path part is encoded (":" is a path character): a token never chooses the path.
      const bot = encodeURIComponent(settings.botToken).replace(/%3A/g, ":");
      const url = `${base(env().TELEGRAM_API_URL)}/bot${bot}/sendMessage`;
      const answer = await post(
        url,
        JSON.stringify({
          chat_id: settings.chatId,
          text: clip(renderText(event), LIMIT.telegram),
          // A statement link is opened once: no preview may use it.
          link_preview_options: { is_disabled: true },
        }),
        json,
        true,
      );
      const data = JSON.parse(answer.body) as { ok?: boolean; description?: string };
      if (data.ok !== true) throw new SendRefused(`Telegram 拒绝：${data.description ?? "没有说明原因"}`);
      return;
    }
    case "ntfy": {
      await post(
        settings.url,
        clip(renderText(event), LIMIT.ntfy),
        {
          "content-type": "text/plain; charset=utf-8",
          // Header values are Latin-1: the title goes RFC 2047-encoded, as ntfy reads it.
          title: `=?UTF-8?B?${Buffer.from(renderTitle(event)).toString("base64")}?=`,
          priority: event.event === "opened" || event.event === "escalated" ? "high" : "default",
          ...(settings.token ? { authorization: `Bearer ${settings.token}` } : {}),
        },
        false,
      );
      return;
    }
    case "wecom": {
      const url = `${base(env().WECOM_API_URL)}/cgi-bin/webhook/send?key=${encodeURIComponent(settings.key)}`;
      const body = JSON.stringify({
        msgtype: "markdown",
        markdown: { content: clip(renderMarkdown(event), LIMIT.wecom) },
      });
      robotAnswer(await post(url, body, json, true), "errcode", "errmsg");
      return;
    }
    case "dingtalk": {
      const timestamp = String(now);
      const query = new URLSearchParams({ access_token: settings.accessToken });
      if (settings.secret) {
        const sign = createHmac("sha256", settings.secret).update(`${timestamp}\n${settings.secret}`).digest("base64");
        query.set("timestamp", timestamp);
        query.set("sign", sign);
      }
      const url = `${base(env().DINGTALK_API_URL)}/robot/send?${query.toString()}`;
      const body = JSON.stringify({
        msgtype: "markdown",
        markdown: { title: renderTitle(event), text: clip(renderMarkdown(event), LIMIT.dingtalk) },
      });
      robotAnswer(await post(url, body, json, true), "errcode", "errmsg");
      return;
    }
    case "feishu": {
      const url = `${base(env().FEISHU_API_URL)}/open-apis/bot/v2/hook/${encodeURIComponent(settings.hookId)}`;
      const timestamp = String(Math.floor(now / 1000));
      const signed = settings.secret
        ? { timestamp, sign: createHmac("sha256", `${timestamp}\n${settings.secret}`).update("").digest("base64") }
        : {};
      const body = JSON.stringify({
        ...signed,
        msg_type: "text",
        content: { text: clip(renderText(event), LIMIT.feishu) },
      });
      robotAnswer(await post(url, body, json, true), "code", "msg");
      return;
    }
  }
}
