/**
 * One log entry as the ledger keeps it, normalized across families and named by its second and a
 * fingerprint of its content; and what a site may send before the sync refuses it.
 */
import { createHash } from "node:crypto";
import type { EntryRow } from "./store";
import { logItemInBounds, type LogItem } from "../gateway/reads";

export type Entry = Omit<EntryRow, "ordinal">;

/**
 * What a site may send before the sync refuses it. Quotas and token counts outside their bounds
 * (docs/design.md 29) are no real request (and would overflow an hour's sums); a second with more
 * than MAX_SECOND_ENTRIES entries of one account is no real traffic, and holding it would take
 * the server's memory; a run reads at most MAX_RUN_PAGES pages and MAX_RUN_BYTES, then goes on at
 * the next sync from where it stopped; after MAX_RUN_REFUSED_SECONDS refused seconds the run stops.
 */
export const LEDGER_LIMITS = {
  MAX_SECOND_ENTRIES: 2000,
  MAX_RUN_PAGES: 10_000,
  MAX_RUN_BYTES: 512 * 2 ** 20,
  MAX_RUN_REFUSED_SECONDS: 5,
} as const;

export const REFUSED = {
  time: "日志时间不可能（1970 年以前或 9999 年以后）",
  number: "日志中的额度或 tokens 超出合理范围",
  crowded: `同一秒内的日志超过 ${LEDGER_LIMITS.MAX_SECOND_ENTRIES} 条`,
  tooManySeconds: "站点返回的日志多次超出合理范围，本次同步已停止",
  runLimit: "本次同步已达单次读取上限，下次同步从此处继续",
  stopped: "服务停止，本次同步已中断，下次同步从此处继续",
} as const;

/** Roughly what an entry takes in memory and on the wire (its texts and its numbers). */
export const entryBytes = (e: Entry) =>
  2 * (e.model.length + e.tokenName.length + e.content.length + e.detail.length) + 160;

/** The entry as the ledger keeps it, or why it is refused. */
export function entryOf(item: LogItem): Entry | { refused: string } {
  if (item.createdAt === null) return { refused: REFUSED.time };
  const durationMs = item.durationMs === null ? null : Math.round(item.durationMs);
  if (!logItemInBounds({ ...item, durationMs })) return { refused: REFUSED.number };
  const at = Math.floor(Date.parse(item.createdAt) / 1000);
  const fingerprint = createHash("sha256")
    .update(
      JSON.stringify([
        item.type,
        item.model,
        item.tokenName,
        item.quota,
        item.promptTokens,
        item.completionTokens,
        item.durationMs,
        item.stream,
        item.content,
      ]),
    )
    .digest("hex")
    .slice(0, 32);
  return {
    at,
    fingerprint,
    type: item.type,
    model: item.model,
    tokenName: item.tokenName,
    quota: item.quota,
    promptTokens: item.promptTokens,
    completionTokens: item.completionTokens,
    durationMs,
    stream: item.stream,
    content: item.content,
    detail: Object.keys(item.detail).length ? JSON.stringify(item.detail) : "",
  };
}
