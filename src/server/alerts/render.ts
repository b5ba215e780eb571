/**
 * An alert event in words, as each channel reads well: plain text (email, ntfy, Feishu) or
 * Markdown (Telegram, WeCom, DingTalk). The webhook gets the JSON itself.
 */
import { minuteIn } from "../core/time";

export type EventPayload = {
  event: "opened" | "reminder" | "escalated" | "resolved" | "test" | "digest";
  at: string;
  /** The workspace's zone, in which the message tells its times (UTC when absent). */
  timeZone?: string;
  /** A digest comes rendered (digests.ts). */
  digest?: { title: string; text: string; markdown: string };
  message?: string;
  alert?: { id: number; message: string; openedAt: string | null; resolvedAt: string | null };
  rule?: { kind: string; threshold: number | null };
  account?: { name: string; site: string | null; userId: number };
};

const HEAD: Record<EventPayload["event"], string> = {
  opened: "提醒",
  reminder: "仍未恢复",
  escalated: "情况加重",
  resolved: "已恢复",
  test: "测试",
  digest: "摘要",
};

const KIND: Record<string, string> = {
  balance_below: "余额低于",
  days_left_below: "余额可用天数少于",
  spend_today_above: "今日消费超过",
  token_refused: "站点拒绝令牌",
  site_down: "站点无法访问",
  checkin_failed: "自动签到失败",
  unmatched_move: "对账差额超过",
  spend_spike: "今日消费达到近 7 天同一时刻的",
  price_changed: "所用模型涨价超过",
  overcharged_above: "近 24 小时多扣超过",
  overcharged_share_above: "近 24 小时多扣占消费超过",
  plan_ending_within: "套餐到期前",
  plan_used_above: "套餐本周期已用超过",
};

const UNIT: Record<string, string> = {
  balance_below: " 美元",
  days_left_below: " 天",
  spend_today_above: " 美元",
  site_down: " 分钟",
  unmatched_move: " 美元",
  spend_spike: " 倍",
  price_changed: "%",
  overcharged_above: " 美元",
  overcharged_share_above: "%",
  plan_ending_within: " 天",
  plan_used_above: "%",
};

/**
 * "2026-11-25 02:02（Asia/Shanghai）": a time in the workspace's zone (the one its 今日 and its
 * digests count in), named, never a local time without a zone; UTC for a message without one.
 */
function when(iso: string, timeZone = "UTC"): string {
  const local = minuteIn(timeZone, Date.parse(iso));
  return timeZone === "UTC" ? `${local} UTC` : `${local}（${timeZone}）`;
}

export function renderTitle(p: EventPayload): string {
  if (p.digest) return p.digest.title;
  if (p.event === "test") return "【测试】网关控制台的通知渠道";
  const rule = p.rule
    ? `${KIND[p.rule.kind] ?? p.rule.kind}${p.rule.threshold !== null && UNIT[p.rule.kind] ? ` ${p.rule.threshold}${UNIT[p.rule.kind]}` : ""}`
    : "";
  const who = p.account ? `${p.account.name}${p.account.site ? `（${p.account.site}）` : ""}` : "";
  return `【${HEAD[p.event]}】${rule}${who ? ` · ${who}` : ""}`;
}

/** The lines under the title. */
function lines(p: EventPayload): string[] {
  const tz = p.timeZone;
  if (p.event === "test") return [p.message ?? "这是一条测试消息：通知渠道可以收到提醒", `时间：${when(p.at, tz)}`];
  const out = [p.alert?.message ?? ""];
  if (p.event === "resolved") out.push(`恢复于 ${when(p.at, tz)}`);
  else if (p.alert?.openedAt) out.push(`开始于 ${when(p.alert.openedAt, tz)}`);
  return out.filter(Boolean);
}

/**
 * Text cut at a line to fit `maxBytes` of UTF-8 (the chat services' message limits), saying so.
 */
export function clip(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const more = "\n…（更多内容请在控制台查看）";
  const room = maxBytes - Buffer.byteLength(more);
  const kept: string[] = [];
  let used = 0;
  for (const line of text.split("\n")) {
    const size = Buffer.byteLength(line) + 1;
    if (used + size > room) break;
    kept.push(line);
    used += size;
  }
  return kept.join("\n") + more;
}

export function renderText(p: EventPayload): string {
  if (p.digest) return `${p.digest.title}\n\n${p.digest.text}`;
  return [renderTitle(p), ...lines(p)].join("\n");
}

/** Markdown: the title bold, the lines as they are (none of them is markup). */
export function renderMarkdown(p: EventPayload): string {
  if (p.digest) return `**${p.digest.title.replace(/([*_`[\]])/g, "\\$1")}**\n\n${p.digest.markdown}`;
  const escape = (s: string) => s.replace(/([*_`[\]])/g, "\\$1");
  return [`**${escape(renderTitle(p))}**`, ...lines(p).map(escape)].join("\n\n");
}
