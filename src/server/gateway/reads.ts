/**
 * What a signed-in user can read from a site, per family (gateway-user-api.md): which path and
 * parameters to send, and one normalized shape per kind of answer, whatever the family sent.
 */
import { z } from "zod";
import { CHECK_DETAIL_MAX, checkCharge } from "./charge-check";
import { cutText } from "../core/text";
import type { Family, Money } from "./families";
import { draftOf } from "./token-writes";
import { maskKey } from "./credentials";
import { LOG_TYPES, type LogType } from "../../shared/log-types";
import { usdOfQuota } from "../../shared/money";
import { BOUNDS, moneyOf, quotaOf } from "../../shared/bounds";

export { LOG_TYPES, type LogType };
const TOKEN_STATUSES = ["enabled", "disabled", "expired", "exhausted"] as const;
type TokenStatus = (typeof TOKEN_STATUSES)[number];

export type SiteRequest = { path: string; query: Record<string, string | number | undefined> };

const isoTime = z.iso.datetime();

export const pagingSchema = z.object({
  page: z.number().int(),
  pageSize: z.number().int().describe("每页条数（与请求相同）"),
  total: z.number().int().nullable().describe("总条数；站点不提供时为 null"),
  hasMore: z.boolean(),
});
export type Paging = z.infer<typeof pagingSchema>;

/** One entry of the usage log, whatever the family sent. */
const chargeCheckSchema = z
  .union([
    z.object({
      expected: z.number().describe("按站点的算法应扣的额度"),
      ok: z.boolean().describe("与站点实际扣的相符"),
    }),
    z.object({ expected: z.null(), reason: z.string().describe("日志不足以复算的原因") }),
  ])
  .nullable()
  .describe(
    "核对：按这条记录自身的 tokens 与倍率复算的扣费（new-api 为精确十进制、四舍五入；one-hub/done-hub 为浮点、向上取整，允许相差 1）；不是消费记录时为 null",
  );

export const logItemSchema = z
  .object({
    createdAt: isoTime.nullable().describe("站点给出的时间不可能（1970 年以前或 9999 年以后）时为 null"),
    type: z.enum(LOG_TYPES),
    model: z.string(),
    tokenName: z.string(),
    quota: z.number(),
    usd: z.number(),
    promptTokens: z.number(),
    completionTokens: z.number(),
    durationMs: z.number().nullable(),
    stream: z.boolean(),
    content: z.string(),
    detail: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .describe(
        "站点附带的其他信息（分组、请求 ID、倍率等，如 model_ratio、completion_ratio、group_ratio），键名与站点相同；没有时为空对象",
      ),
    check: chargeCheckSchema,
  })
  .meta({ id: "LogItem" });
export type LogItem = z.infer<typeof logItemSchema>;

export const tokenItemSchema = z
  .object({
    id: z.number(),
    name: z.string(),
    key: z.string().describe("总是打码：前 4 位 + **** + 后 4 位；完整密钥从不经过本服务"),
    status: z.enum(TOKEN_STATUSES),
    remainQuota: z.number().nullable().describe("站点给出的数值超出合理范围时为 null（未知）"),
    remainUsd: z.number().nullable(),
    unlimited: z.boolean(),
    usedQuota: z.number().nullable().describe("站点给出的数值超出合理范围时为 null（未知）"),
    usedUsd: z.number().nullable(),
    expiresAt: isoTime.nullable().describe("永不过期时为 null"),
    createdAt: isoTime.nullable(),
    lastUsedAt: isoTime.nullable(),
    group: z.string(),
    models: z.array(z.string()).describe("令牌限用的模型；空数组表示不限"),
    allowIps: z.array(z.string()).describe("令牌的 IP 白名单（地址或网段）；空数组表示不限"),
  })
  .meta({ id: "TokenItem" });
export type TokenItem = z.infer<typeof tokenItemSchema>;

export const topupItemSchema = z
  .object({
    createdAt: isoTime.nullable(),
    completedAt: isoTime.nullable(),
    amountUsd: z.number().nullable().describe("充值的美元额度；站点给出的数值超出合理范围时为 null（未知）"),
    money: z.number().nullable().describe("实付金额（站点货币）；超出合理范围时为 null"),
    method: z.string(),
    status: z.string().describe("pending | success | failed | expired"),
    tradeNo: z.string(),
  })
  .meta({ id: "TopupItem" });
export type TopupItem = z.infer<typeof topupItemSchema>;

export type SelfInfo = {
  user: { id: number; username: string; displayName: string; group: string };
  /** Null: the site's figure is outside the bounds (docs/design.md 29), unknown. */
  quota: number | null;
  usedQuota: number | null;
  requestCount: number | null;
};

export type LogQuery = {
  page: number;
  pageSize: number;
  type?: Exclude<LogType, "other">;
  model?: string;
  token?: string;
  /** Unix seconds, inclusive. */
  from?: number;
  to?: number;
};

/** Shapes of gateway-user-api.md §3–§7, with the fields this service reads. */
type Row = Record<string, unknown>;

/** Longest name (model, token, group, user…) kept of what a site sends; longer ones are cut. */
const NAME_MAX = 200;
/** Longest log text kept. */
const CONTENT_MAX = 2000;
/** At most this many extra fields of a log entry are kept, each value at most DETAIL_TEXT_MAX characters. */
const DETAIL_KEYS_MAX = CHECK_DETAIL_MAX;
const DETAIL_TEXT_MAX = 200;
const DETAIL_KEY = /^[A-Za-z][A-Za-z0-9_]{0,39}$/;
/** The last second a date holds in every store and format (9999-12-31T23:59:59Z). */
const LAST_SECOND = 253_402_300_799;

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
/** A text of the site's, at most `max` characters (cut ones copied out). */
const str = (v: unknown, max = NAME_MAX): string => (typeof v === "string" ? cutText(v, max) : "");
const iso = (seconds: unknown): string | null =>
  typeof seconds === "number" && seconds > 0 && seconds <= LAST_SECOND ? new Date(seconds * 1000).toISOString() : null;
export const usdOf = (quota: number, money: Money) => usdOfQuota(quota, money.quotaPerUnit);

const oneHubLike = (f: Family) => f === "one-hub" || f === "done-hub";
/** Families whose token list is 0-based (Veloera, one-api, new-api before 2025-06). */
export const zeroBasedTokens = (f: Family) => f === "veloera" || f === "one-api" || f === "new-api-legacy";

/** Log type numbers: 1–4 shared; 5 is error (new-api), check-in (Veloera) or test (one-api). */
const TYPE_NUMBER: Record<Exclude<LogType, "other">, number> = {
  topup: 1,
  consume: 2,
  manage: 3,
  system: 4,
  error: 5,
  refund: 6,
};

function logTypeOf(family: Family, n: unknown): LogType {
  switch (n) {
    case 1:
      return "topup";
    case 2:
      return "consume";
    case 3:
      return "manage";
    case 4:
      return "system";
    case 5:
      if (family === "veloera") return "system"; // check-in reward
      if (family === "one-api" || oneHubLike(family)) return "other"; // one-api's channel test
      return "error";
    case 6:
      return family === "new-api" || family === "unknown" ? "refund" : "other";
    default:
      return "other";
  }
}

/** Whether the family can filter by this type at all (else the answer is empty without a call). */
export function familyHasLogType(family: Family, type: Exclude<LogType, "other">): boolean {
  if (type === "error") return family === "new-api" || family === "new-api-legacy" || family === "unknown";
  if (type === "refund") return family === "new-api" || family === "unknown";
  return true;
}

/** One-api pages are a fixed 10 rows, whatever is asked. */
export function effectivePageSize(family: Family, pageSize: number): number {
  return family === "one-api" ? 10 : pageSize;
}

export function logsRequest(family: Family, q: LogQuery): SiteRequest {
  const filters = {
    model_name: q.model,
    token_name: q.token,
    start_timestamp: q.from,
    end_timestamp: q.to,
  };
  const type = q.type ? TYPE_NUMBER[q.type] : undefined;
  if (oneHubLike(family)) {
    return { path: "/api/log/self", query: { page: q.page, size: q.pageSize, log_type: type, ...filters } };
  }
  if (family === "one-api") return { path: "/api/log/self", query: { p: q.page - 1, type, ...filters } };
  // new-api of every age and Veloera: 1-based `p`; `page_size` always sent (older builds answer an empty page without).
  return { path: "/api/log/self", query: { p: q.page, page_size: q.pageSize, type, ...filters } };
}

/** The today's-spend request: the sum of consume logs in a window (every family has it). */
export function statRequest(family: Family, from: number, to: number): SiteRequest {
  const type = oneHubLike(family) ? { log_type: 2 } : { type: 2 };
  return { path: "/api/log/self/stat", query: { ...type, start_timestamp: from, end_timestamp: to } };
}

/**
 * Today's requests: a one-row page of consume logs since midnight, read for its total. one-api
 * counts nothing (its pages have no total): null.
 */
export function countRequest(family: Family, from: number, to: number): SiteRequest | null {
  if (family === "one-api") return null;
  const window = { start_timestamp: from, end_timestamp: to };
  if (oneHubLike(family)) return { path: "/api/log/self", query: { page: 1, size: 1, log_type: 2, ...window } };
  return { path: "/api/log/self", query: { p: 1, page_size: 1, type: 2, ...window } };
}

export function tokensRequest(
  family: Family,
  page: number,
  pageSize: number,
  zeroBased = zeroBasedTokens(family),
): SiteRequest {
  if (oneHubLike(family)) return { path: "/api/token/", query: { page, size: pageSize } };
  if (family === "one-api") return { path: "/api/token/", query: { p: page - 1 } };
  return { path: "/api/token/", query: { p: zeroBased ? page - 1 : page, size: pageSize } };
}

export function topupsRequest(page: number, pageSize: number): SiteRequest {
  return { path: "/api/user/topup/self", query: { p: page, page_size: pageSize } };
}

/** Only current new-api has a user's top-up history (§3.8); the others keep top-ups as logs. */
export const familyHasTopups = (family: Family) => family === "new-api" || family === "unknown";

/** A page in whichever shape the site sent: a plain array, `{items,total}` or `{data,total_count}`. */
export function pageOf(data: unknown): { rows: Row[]; total: number | null; shape: "array" | "items" | "data" } | null {
  if (Array.isArray(data)) return { rows: data.filter(isRow), total: null, shape: "array" };
  if (!isRow(data)) return null;
  if (Array.isArray(data.items)) {
    return {
      rows: data.items.filter(isRow),
      total: typeof data.total === "number" ? data.total : null,
      shape: "items",
    };
  }
  if (Array.isArray(data.data)) {
    return {
      rows: data.data.filter(isRow),
      total: typeof data.total_count === "number" ? data.total_count : null,
      shape: "data",
    };
  }
  // Empty lists may come as null in some builds.
  if (data.items === null || data.data === null) return { rows: [], total: 0, shape: "items" };
  return null;
}

export function isRow(v: unknown): v is Row {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function paging(page: number, pageSize: number, rows: number, total: number | null): Paging {
  return { page, pageSize, total, hasMore: total !== null ? page * pageSize < total : rows >= pageSize };
}

function durationMs(row: Row): number | null {
  if (typeof row.use_time === "number") return row.use_time * 1000; // new-api, Veloera: seconds
  if (typeof row.elapsed_time === "number") return row.elapsed_time; // one-api: ms
  if (typeof row.request_time === "number") return row.request_time; // one-hub, done-hub: ms
  return null;
}

export type LogDetail = LogItem["detail"];

/**
 * What a log entry carries besides its columns: its group and request id, and the flat values of
 * new-api's `other` (a JSON string) or one-hub's `metadata` (an object): the ratios, cache tokens,
 * first-token time. Only plain scalars under plain keys, bounded in number and length.
 */
function logDetail(row: Row): LogDetail {
  const out: LogDetail = {};
  const add = (key: string, v: unknown) => {
    if (Object.keys(out).length >= DETAIL_KEYS_MAX || !DETAIL_KEY.test(key) || key in out) return;
    if (typeof v === "string" && v !== "") out[key] = cutText(v, DETAIL_TEXT_MAX);
    else if (typeof v === "number" && Number.isFinite(v)) out[key] = v;
    else if (typeof v === "boolean") out[key] = v;
    // A list or object (new-api's tool surcharges, one-hub's extra billing) as its JSON text.
    else if (typeof v === "object" && v !== null) out[key] = cutText(JSON.stringify(v), DETAIL_TEXT_MAX);
  };
  add("group", row.group);
  add("request_id", row.request_id);
  let extra: unknown = row.metadata ?? row.other;
  if (typeof extra === "string" && extra.length <= 20_000) {
    try {
      extra = JSON.parse(extra);
    } catch {
      extra = null;
    }
  }
  if (extra !== null && typeof extra === "object" && !Array.isArray(extra)) {
    for (const [k, v] of Object.entries(extra as Row)) add(k, v);
  }
  return out;
}

export function logItem(family: Family, row: Row, money: Money): LogItem {
  const quota = num(row.quota);
  const item = {
    createdAt: iso(row.created_at),
    type: logTypeOf(family, row.type),
    model: str(row.model_name),
    tokenName: str(row.token_name),
    quota,
    usd: usdOf(quota, money),
    promptTokens: num(row.prompt_tokens),
    completionTokens: num(row.completion_tokens),
    durationMs: durationMs(row),
    stream: row.is_stream === true,
    content: str(row.content, CONTENT_MAX),
    detail: logDetail(row),
  };
  return { ...item, check: checkCharge(item, money.quotaPerUnit) };
}

/**
 * Whether an entry's figures are within their bounds (docs/design.md 29): its quota and tokens
 * whole numbers the ledger can hold and sum, its duration a time. One outside is unknown: left out
 * of a live page, refused and counted by the ledger.
 */
export function logItemInBounds(item: Pick<LogItem, "quota" | "promptTokens" | "completionTokens" | "durationMs">) {
  const whole = (n: number, max: number) => Number.isSafeInteger(n) && Math.abs(n) <= max;
  return (
    whole(item.quota, BOUNDS.entryQuota) &&
    whole(item.promptTokens, BOUNDS.tokens) &&
    whole(item.completionTokens, BOUNDS.tokens) &&
    (item.durationMs === null || (item.durationMs >= 0 && item.durationMs <= DURATION_MAX_MS))
  );
}
/** The longest a request may take (24.8 days: what a 32-bit millisecond count holds). */
const DURATION_MAX_MS = 2_147_483_647;

const TOKEN_STATUS: Record<number, TokenStatus> = { 1: "enabled", 2: "disabled", 3: "expired", 4: "exhausted" };

/** Most models or addresses of a token's limits kept. */
const LIST_MAX = 200;

export function tokenItem(row: Row, money: Money): TokenItem {
  const limits = draftOf(row);
  const remain = bounded(row.remain_quota, quotaOf);
  const used = bounded(row.used_quota, quotaOf);
  const usd = (q: number | null) => (q === null ? null : usdOf(q, money));
  return {
    id: num(row.id),
    name: str(row.name),
    key: maskKey(str(row.key)),
    status: TOKEN_STATUS[num(row.status)] ?? "disabled",
    remainQuota: remain,
    remainUsd: usd(remain),
    unlimited: row.unlimited_quota === true,
    usedQuota: used,
    usedUsd: usd(used),
    expiresAt: row.expired_time === -1 ? null : iso(row.expired_time),
    createdAt: iso(row.created_time),
    lastUsedAt: iso(row.accessed_time),
    group: str(row.group),
    // A hostile site's thousands of names are not kept: the first of them, each cut.
    models: limits.models.slice(0, LIST_MAX).map((m) => cutText(m, NAME_MAX)),
    allowIps: limits.allowIps.slice(0, LIST_MAX).map((m) => cutText(m, NAME_MAX)),
  };
}

export function topupItem(row: Row): TopupItem {
  return {
    createdAt: iso(row.create_time),
    completedAt: iso(row.complete_time),
    amountUsd: bounded(row.amount, moneyOf),
    money: bounded(row.money, moneyOf),
    method: str(row.payment_method),
    status: str(row.status),
    tradeNo: str(row.trade_no),
  };
}

export function selfInfo(data: Row): SelfInfo {
  return {
    user: {
      id: num(data.id),
      username: str(data.username),
      displayName: str(data.display_name),
      group: str(data.group),
    },
    quota: bounded(data.quota, quotaOf),
    usedQuota: bounded(data.used_quota, quotaOf),
    requestCount: bounded(data.request_count, countOf),
  };
}

/** A figure the site sent through its bound (null: outside it); one it did not send is 0, as before. */
const bounded = (v: unknown, parse: (v: unknown) => number | null): number | null =>
  typeof v === "number" ? parse(v) : 0;
const countOf = (v: unknown) => {
  const n = quotaOf(v);
  return n !== null && n >= 0 ? n : null;
};
