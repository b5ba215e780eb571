/**
 * A workspace's alert channels (design.md 21): where its alerts go. Settings (the address and
 * the signing secret) are sealed at rest like saved access tokens; what is shown is the address
 * without its query. Every address is checked before it is saved and again as it is connected to
 * (net/outbound.ts): never an internal address unless the operator allows private targets.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { Db } from "../db/client";
import { env } from "../core/env";
import { OutboundRefused, checkOutboundUrl, postOutbound } from "../net/outbound";
import { vaultOpen, vaultSeal } from "../session/vault";
import type { AlertChannelView } from "./schemas";

export const CHANNEL_TYPES = ["webhook"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** At most this many channels per workspace. */
export const MAX_CHANNELS = 20;

export class AlertRefused extends Error {}

type WebhookSettings = { url: string; secret: string };

const sealContext = (workspaceId: number) => `alert-channel:${workspaceId}`;

/** The address as shown: scheme, host, port and path; never its query (it may carry a key). */
function targetOf(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

const channelSelect = { id: true, type: true, name: true, target: true, createdAt: true } as const;

const view = (c: { id: number; type: string; name: string; target: string; createdAt: Date }): AlertChannelView => ({
  id: c.id,
  type: c.type as ChannelType,
  name: c.name,
  target: c.target,
  createdAt: c.createdAt.toISOString(),
});

export const outboundOptions = () => ({
  timeoutMs: env().ALERT_TIMEOUT_MS,
  maxBytes: 64 * 1024,
  allowPrivate: env().ALERT_ALLOW_PRIVATE,
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

    /** Adds a webhook; its signing secret (given, or made here) is answered this once. */
    async create(
      workspaceId: number,
      input: { type: ChannelType; name: string; url: string; secret?: string | undefined },
      now = new Date(),
    ): Promise<{ channel: AlertChannelView; secret: string }> {
      const name = input.name.trim();
      if (name === "" || [...name].length > 40) throw new AlertRefused("渠道名称须为 1 到 40 个字符");
      let url: URL;
      try {
        url = checkOutboundUrl(input.url.trim(), outboundOptions().allowPrivate);
      } catch (error) {
        if (error instanceof OutboundRefused) throw new AlertRefused(`地址不能用：${error.message}`);
        throw error;
      }
      const secret = input.secret?.trim() || randomBytes(24).toString("hex");
      if (secret.length < 16 || secret.length > 200) throw new AlertRefused("签名密钥须为 16 到 200 个字符");
      const count = await db.alertChannel.count({ where: { workspaceId } });
      if (count >= MAX_CHANNELS) throw new AlertRefused(`每个工作区至多 ${MAX_CHANNELS} 个通知渠道`);
      const settings: WebhookSettings = { url: url.toString(), secret };
      const row = await db.alertChannel.create({
        data: {
          workspaceId,
          type: input.type,
          name,
          settings: vaultSeal(JSON.stringify(settings), sealContext(workspaceId)),
          target: targetOf(url),
          createdAt: now,
        },
        select: channelSelect,
      });
      return { channel: view(row), secret };
    },

    async remove(workspaceId: number, id: number): Promise<boolean> {
      const { count } = await db.alertChannel.deleteMany({ where: { id, workspaceId } });
      return count > 0;
    },

    /** The channels of the workspace among `ids` (others' ids are dropped). */
    async ownIds(workspaceId: number, ids: number[]): Promise<number[]> {
      if (ids.length === 0) return [];
      const rows = await db.alertChannel.findMany({ where: { workspaceId, id: { in: ids } }, select: { id: true } });
      return rows.map((r) => r.id);
    },
  };
}

/** Sends one message to a channel; throws with the reason in words when it was not taken. */
export async function sendToChannel(
  db: Db,
  channelId: number,
  event: string,
  payload: string,
  now = Date.now(),
): Promise<void> {
  const row = await db.alertChannel.findUnique({
    where: { id: channelId },
    select: { workspaceId: true, type: true, settings: true },
  });
  if (!row) throw new AlertRefused("通知渠道已删除");
  const opened = vaultOpen(row.settings, sealContext(row.workspaceId));
  if (opened === null) throw new AlertRefused("渠道设置无法解密（密钥已更换），请重新添加");
  const settings = JSON.parse(opened) as WebhookSettings;
  const timestamp = String(Math.floor(now / 1000));
  const signature = createHmac("sha256", settings.secret).update(`${timestamp}.${payload}`).digest("hex");
  let answer;
  try {
    answer = await postOutbound(
      settings.url,
      payload,
      {
        "user-agent": "gateway-dashboard-alerts",
        "x-gd-event": event,
        "x-gd-timestamp": timestamp,
        "x-gd-signature": `sha256=${signature}`,
      },
      outboundOptions(),
    );
  } catch (error) {
    if (error instanceof OutboundRefused) throw new AlertRefused(error.message);
    const code = (error as { code?: string }).code;
    throw new AlertRefused(code === "ECONNREFUSED" ? "连接被拒绝" : code ? `无法连接（${code}）` : "无法连接");
  }
  if (answer.status < 200 || answer.status >= 300) {
    throw new AlertRefused(
      answer.status >= 300 && answer.status < 400
        ? `对方要求重定向（HTTP ${answer.status}），不跟随`
        : `对方答复 HTTP ${answer.status}`,
    );
  }
}
