/**
 * A workspace's alert channels (docs/design.md 21): where its alerts go. Settings (addresses, tokens,
 * secrets) are sealed at rest like saved access tokens; what is shown is a target that names the
 * place without its secrets. A robot's webhook address may be pasted whole: its token is taken
 * from it, and the message goes to the robot service's own address (an operator's setting).
 */
import { randomBytes } from "node:crypto";
import { Refusal } from "../core/errors";
import type { Db } from "../db/client";
import { hitPerMinute } from "../auth/rate-limit";
import { env } from "../core/env";
import { OutboundRefused, checkOutboundUrl } from "../net/outbound";
import { reseal, sealedWithOlderKey, vaultOpen, vaultSeal } from "../session/vault";
import type { AlertChannelView } from "./schemas";
import { STATEMENT_LINK_MARK, type DigestPayload } from "./digest-report";
import {
  CHANNEL_TYPES,
  SendRefused,
  sendWith,
  type Attachment,
  type ChannelSettings,
  type ChannelType,
} from "./senders";
import { createStatementLink, workspaceStatement } from "./statement-links";

/** At most this many channels per workspace. */
const MAX_CHANNELS = 20;

/** Why an alert setting or a send was refused, in words. */
export class AlertRefused extends Refusal {}

const sealContext = (workspaceId: number) => `alert-channel:${workspaceId}`;

/** What a person gives for a channel; which fields count depends on its type. */
export type ChannelInput = {
  type: ChannelType;
  name: string;
  url?: string | undefined;
  secret?: string | undefined;
  to?: string | undefined;
  botToken?: string | undefined;
  chatId?: string | undefined;
  token?: string | undefined;
};

const EMAIL = /^[^\s@<>(),;:"]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,}$/;
const TOKENISH = /^[A-Za-z0-9_-]{8,200}$/;

function checkedUrl(raw: string | undefined, what: string): URL {
  if (!raw?.trim()) throw new AlertRefused(`请填写${what}`);
  try {
    return checkOutboundUrl(raw.trim(), env().ALERT_ALLOW_PRIVATE);
  } catch (error) {
    if (error instanceof OutboundRefused) throw new AlertRefused(`地址不能用：${error.message}`);
    throw error;
  }
}

/** A robot's token: given as is, or taken from its pasted webhook address. */
function robotToken(input: ChannelInput, param: string | null, what: string): string {
  const raw = (input.token ?? input.url ?? "").trim();
  let token = raw;
  if (/^https?:\/\//i.test(raw)) {
    try {
      const url = new URL(raw);
      token = param ? (url.searchParams.get(param) ?? "") : (url.pathname.split("/").filter(Boolean).at(-1) ?? "");
    } catch {
      token = "";
    }
  }
  if (!TOKENISH.test(token)) throw new AlertRefused(`请填写${what}（可直接粘贴机器人的 Webhook 地址）`);
  return token;
}

const tail = (s: string) => `…${s.slice(-4)}`;

/** The settings to seal and the target to show, checked per type. */
function settingsOf(input: ChannelInput): { settings: ChannelSettings; target: string; secret: string | null } {
  const secret = input.secret?.trim() ?? "";
  switch (input.type) {
    case "webhook": {
      const url = checkedUrl(input.url, "Webhook 地址");
      const own = secret || randomBytes(24).toString("hex");
      if (own.length < 16 || own.length > 200) throw new AlertRefused("签名密钥须为 16 到 200 个字符");
      return {
        settings: { type: "webhook", url: url.toString(), secret: own },
        target: `${url.protocol}//${url.host}${url.pathname}`,
        secret: own,
      };
    }
    case "email": {
      const to = input.to?.trim() ?? "";
      if (!EMAIL.test(to)) throw new AlertRefused("请填写有效的邮箱地址");
      if (!env().SMTP_URL) throw new AlertRefused("运营方未配置邮件服务（SMTP_URL），不能添加邮件渠道");
      return { settings: { type: "email", to }, target: to, secret: null };
    }
    case "telegram": {
      const botToken = input.botToken?.trim() ?? "";
      const chatId = input.chatId?.trim() ?? "";
      if (!/^\d{3,20}:[A-Za-z0-9_-]{20,100}$/.test(botToken))
        throw new AlertRefused("请填写 Bot Token（形如 123456:ABC…）");
      if (!/^(-?\d{1,20}|@[A-Za-z0-9_]{4,64})$/.test(chatId))
        throw new AlertRefused("请填写 Chat ID（数字，或 @频道名）");
      return { settings: { type: "telegram", botToken, chatId }, target: `Telegram ${chatId}`, secret: null };
    }
    case "ntfy": {
      const url = checkedUrl(input.url, "ntfy 主题地址（如 https://ntfy.sh/my-topic）");
      if (url.pathname.split("/").filter(Boolean).length === 0)
        throw new AlertRefused("ntfy 地址须包含主题，如 https://ntfy.sh/my-topic");
      const token = input.token?.trim() ?? "";
      return {
        settings: { type: "ntfy", url: url.toString(), token },
        target: `${url.protocol}//${url.host}${url.pathname}`,
        secret: null,
      };
    }
    case "wecom": {
      const key = robotToken(input, "key", "企业微信机器人的 key");
      return { settings: { type: "wecom", key }, target: `企业微信机器人 ${tail(key)}`, secret: null };
    }
    case "dingtalk": {
      const accessToken = robotToken(input, "access_token", "钉钉机器人的 access_token");
      if (secret && !/^SEC[A-Za-z0-9]{16,100}$/.test(secret)) throw new AlertRefused("加签密钥应以 SEC 开头");
      return {
        settings: { type: "dingtalk", accessToken, secret },
        target: `钉钉机器人 ${tail(accessToken)}${secret ? "（加签）" : ""}`,
        secret: null,
      };
    }
    case "feishu": {
      const hookId = robotToken(input, null, "飞书机器人的 Webhook 地址");
      return {
        settings: { type: "feishu", hookId, secret },
        target: `飞书机器人 ${tail(hookId)}${secret ? "（签名校验）" : ""}`,
        secret: null,
      };
    }
  }
}

/** A backup's channel as the input that made it (the settings settingsOf wrote, read back); null when it is none. */
function restoredInput(channel: { type: string; name: string; settings: unknown }): ChannelInput | null {
  const s = channel.settings;
  if (!CHANNEL_TYPES.includes(channel.type as ChannelType) || typeof s !== "object" || s === null) return null;
  const field = (k: string) => {
    const v = (s as Record<string, unknown>)[k];
    return typeof v === "string" ? v : undefined;
  };
  if (field("type") !== channel.type || typeof channel.name !== "string") return null;
  const base = { type: channel.type as ChannelType, name: channel.name.slice(0, 40) };
  switch (base.type) {
    case "webhook":
      return { ...base, url: field("url"), secret: field("secret") };
    case "email":
      return { ...base, to: field("to") };
    case "telegram":
      return { ...base, botToken: field("botToken"), chatId: field("chatId") };
    case "ntfy":
      return { ...base, url: field("url"), token: field("token") };
    case "wecom":
      return { ...base, token: field("key") };
    case "dingtalk":
      return { ...base, token: field("accessToken"), secret: field("secret") };
    case "feishu":
      return { ...base, token: field("hookId"), secret: field("secret") };
  }
}

const channelSelect = { id: true, type: true, name: true, target: true, createdAt: true } as const;

const view = (c: { id: number; type: string; name: string; target: string; createdAt: Date }): AlertChannelView => ({
  id: c.id,
  type: c.type as ChannelType,
  name: c.name,
  target: c.target,
  createdAt: c.createdAt.toISOString(),
});

export function alertChannels(db: Db) {
  return {
    async list(workspaceId: number): Promise<AlertChannelView[]> {
      const rows = await db.alertChannel.findMany({
        where: { workspaceId },
        orderBy: { id: "asc" },
        select: channelSelect,
      });
      return rows.map(view);
    },

    /** Adds a channel; a webhook's signing secret (given, or made here) is answered this once. */
    async create(
      workspaceId: number,
      input: ChannelInput,
      now = new Date(),
    ): Promise<{ channel: AlertChannelView; secret: string | null }> {
      const name = input.name.trim();
      if (name === "" || [...name].length > 40) throw new AlertRefused("渠道名称须为 1 到 40 个字符");
      const { settings, target, secret } = settingsOf(input);
      const count = await db.alertChannel.count({ where: { workspaceId } });
      if (count >= MAX_CHANNELS) throw new AlertRefused(`每个工作区至多 ${MAX_CHANNELS} 个通知渠道`);
      const row = await db.alertChannel.create({
        data: {
          workspaceId,
          type: input.type,
          name,
          settings: vaultSeal(JSON.stringify(settings), sealContext(workspaceId)),
          target,
          createdAt: now,
        },
        select: channelSelect,
      });
      return { channel: view(row), secret };
    },

    /** Removes a channel; its messages still waiting are given up (their history stays). */
    async remove(workspaceId: number, id: number): Promise<boolean> {
      const { count } = await db.alertChannel.deleteMany({ where: { id, workspaceId } });
      if (count > 0) {
        await db.alertDelivery.updateMany({
          where: { channelId: id, status: "pending" },
          data: { status: "failed", lastError: "通知渠道已删除", claimedUntil: null },
        });
      }
      return count > 0;
    },

    /** Every channel with its settings opened, for the workspace's backup (null where they no longer open). */
    async exported(
      workspaceId: number,
    ): Promise<{ id: number; type: ChannelType; name: string; target: string; settings: unknown }[]> {
      const rows = await db.alertChannel.findMany({
        where: { workspaceId },
        orderBy: { id: "asc" },
        select: { id: true, type: true, name: true, target: true, settings: true },
      });
      return rows.flatMap((r) => {
        const opened = vaultOpen(r.settings, sealContext(workspaceId));
        return opened === null
          ? []
          : [
              {
                id: r.id,
                type: r.type as ChannelType,
                name: r.name,
                target: r.target,
                settings: JSON.parse(opened) as unknown,
              },
            ];
      });
    },

    /**
     * A channel of a backup, checked exactly as a created one (a file is anyone's words: its
     * addresses, tokens and ids pass the same rules), its settings sealed for this workspace; its
     * new id, or null when it does not pass.
     */
    async restored(
      workspaceId: number,
      channel: { type: string; name: string; settings: unknown },
      now = new Date(),
    ): Promise<number | null> {
      const input = restoredInput(channel);
      if (input === null) return null;
      try {
        return (await this.create(workspaceId, input, now)).channel.id;
      } catch (error) {
        if (error instanceof AlertRefused) return null;
        throw error;
      }
    },

    /** The channels of the workspace among `ids` (others' ids are dropped). */
    async ownIds(workspaceId: number, ids: number[]): Promise<number[]> {
      if (ids.length === 0) return [];
      const rows = await db.alertChannel.findMany({ where: { workspaceId, id: { in: ids } }, select: { id: true } });
      return rows.map((r) => r.id);
    },
  };
}

/** Tests a workspace may send to its channels a minute (the 测试 button is not a way to probe addresses). */
const CHANNEL_TESTS_PER_MINUTE = 10;

/** Channels sent to an address the person gave (the others go to the services' own hosts). */
const OWN_ADDRESS = new Set(["webhook", "ntfy"]);

/**
 * Sends the 测试 message to a workspace's channel, within CHANNEL_TESTS_PER_MINUTE. For a channel
 * at an address the person gave, the answer says only whether it was delivered and the HTTP status
 * the receiver answered, never why a connection failed (refused, timed out, reset): that would
 * tell which addresses and ports answer. A chat service's or the mail server's refusal is told.
 */
export async function testChannel(
  db: Db,
  workspace: { id: number; timeZone: string },
  channelId: number,
  now = Date.now(),
): Promise<string> {
  const { id: workspaceId, timeZone } = workspace;
  const limit = await hitPerMinute(db, `channel-test:${workspaceId}`, CHANNEL_TESTS_PER_MINUTE, now);
  if (!limit.allowed) {
    const message = `测试过于频繁：每分钟最多 ${CHANNEL_TESTS_PER_MINUTE} 次，请 ${limit.retryAfterSeconds} 秒后再试`;
    throw new Refusal(message, "TOO_MANY_REQUESTS", limit.retryAfterSeconds);
  }
  const payload = JSON.stringify({
    event: "test",
    at: new Date(now).toISOString(),
    timeZone,
    message: "这是一条测试消息：通知渠道可以收到提醒",
  });
  try {
    await sendToChannel(db, channelId, payload, now);
    return "测试消息已送达";
  } catch (error) {
    if (!(error instanceof AlertRefused)) throw error;
    const row = await db.alertChannel.findUnique({ where: { id: channelId }, select: { type: true } });
    if (!row || !OWN_ADDRESS.has(row.type)) throw error;
    const status = /HTTP (\d{3})/.exec(error.message)?.[1];
    throw new AlertRefused(status ? `测试消息未送达（对方答复 HTTP ${status}）` : "测试消息未送达");
  }
}

/** Sends one message to a channel; throws AlertRefused with the reason in words when it was not taken. */
export async function sendToChannel(db: Db, channelId: number, payload: string, now = Date.now()): Promise<void> {
  const row = await db.alertChannel.findUnique({
    where: { id: channelId },
    select: { workspaceId: true, settings: true },
  });
  if (!row) throw new AlertRefused("通知渠道已删除");
  const opened = vaultOpen(row.settings, sealContext(row.workspaceId));
  if (opened === null) throw new AlertRefused("渠道设置无法解密（密钥已更换），请重新添加");
  const settings = JSON.parse(opened) as ChannelSettings;
  try {
    const message = await withStatementLink(db, payload, now);
    await sendWith(settings, message, now, await attachmentsOf(db, settings, payload, now));
  } catch (error) {
    if (error instanceof SendRefused) throw new AlertRefused(error.message);
    throw error;
  }
}

/** A monthly digest to a chat or webhook carries a one-time link to the statement, made now (only its hash is kept). */
async function withStatementLink(db: Db, payload: string, now: number): Promise<string> {
  const { link } = JSON.parse(payload) as Partial<DigestPayload>;
  if (!link) return payload;
  const url = await createStatementLink(db, link.workspaceId, link, new Date(now));
  const message = JSON.parse(payload.split(STATEMENT_LINK_MARK).join(url)) as DigestPayload;
  delete message.link;
  return JSON.stringify(message);
}

/** A monthly digest to email carries the month's statement, rendered when it is sent. */
async function attachmentsOf(db: Db, settings: ChannelSettings, payload: string, now: number): Promise<Attachment[]> {
  if (settings.type !== "email") return [];
  const { statement } = JSON.parse(payload) as Partial<DigestPayload>;
  if (!statement) return [];
  try {
    const pdf = await workspaceStatement(db, statement.workspaceId, statement.month, statement.timeZone, new Date(now));
    const content = Buffer.from(await new Response(pdf.body).arrayBuffer());
    return [{ filename: pdf.filename, content, contentType: "application/pdf" }];
  } catch (error) {
    // Busy rendering, or the store briefly away: the message waits for its next try.
    throw new AlertRefused(`对账单未能生成：${(error as Error).message.slice(0, 200)}`);
  }
}

/** Moves the channels' sealed settings to the vault's current key (with the saved tokens, by `vault-reseal`). */
export async function resealAlertChannels(db: Db): Promise<{ resealed: number; current: number; unopenable: number }> {
  const counts = { resealed: 0, current: 0, unopenable: 0 };
  for (let after = 0; ;) {
    const rows = await db.alertChannel.findMany({
      where: { id: { gt: after } },
      orderBy: { id: "asc" },
      take: 500,
      select: { id: true, workspaceId: true, settings: true },
    });
    for (const row of rows) await resealOne(db, row, counts);
    if (rows.length < 500) return counts;
    after = rows[rows.length - 1]!.id;
  }
}

async function resealOne(
  db: Db,
  row: { id: number; workspaceId: number; settings: string },
  counts: { resealed: number; current: number; unopenable: number },
): Promise<void> {
  if (!sealedWithOlderKey(row.settings)) {
    counts.current++;
    return;
  }
  const next = reseal(row.settings, sealContext(row.workspaceId));
  if (next === null) {
    counts.unopenable++;
    return;
  }
  const { count } = await db.alertChannel.updateMany({
    where: { id: row.id, settings: row.settings },
    data: { settings: next },
  });
  counts.resealed += count;
}
