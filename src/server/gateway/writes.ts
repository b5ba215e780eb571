/**
 * The writes a person makes on a site through this service, per family (gateway-actions.md):
 * redeeming a code and checking in. Each is a request to send and a reading of the site's answer
 * in words; the routes that would harm the account are never among them.
 */
import type { Family } from "./families";

export type WriteRequest = {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
};

/** The site's envelope of a write: `success`, its message, and `data` when it sent one. */
export type WriteAnswer = { success: boolean; message: string; data: unknown };

const isRow = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

// Redeem — POST /api/user/topup {"key"}: every family.

export const redeemRequest = (code: string): WriteRequest => ({
  method: "POST",
  path: "/api/user/topup",
  body: { key: code },
});

/** The quota a redeem added: `data` is the number (Veloera: `{quota, is_gift}`); null when the site did not say. */
export function redeemedQuota(data: unknown): number | null {
  if (typeof data === "number" && Number.isFinite(data)) return data;
  if (isRow(data) && typeof data.quota === "number" && Number.isFinite(data.quota)) return data.quota;
  return null;
}

/**
 * A refused redeem in words a person can act on: current new-api answers every bad code with one
 * generic sentence, and closes redeeming until its administrator confirms the compliance terms.
 */
export function redeemRefusal(message: string): string {
  const m = message.trim();
  if (/^Redemption failed|^兑换失败，请稍后重试/.test(m)) {
    return "兑换失败：站点没有说明原因（兑换码无效、已被使用或已过期时，新版 new-api 都这样回答）";
  }
  if (/compliance|合规声明/.test(m)) {
    return "站点尚未开放兑换：需要站点管理员先在后台确认合规声明";
  }
  if (/^Top-up is processing/i.test(m)) return "该账户有一笔兑换正在处理，请稍后再试";
  return m || "兑换失败";
}

// Check-in: new-api GET|POST /api/user/checkin, Veloera GET /api/user/check_in_status + POST /api/user/check_in.

export type CheckinFamily = "new-api" | "veloera";

/** Which check-in a family has; null for the families without one. */
export function checkinFamily(family: Family): CheckinFamily | null {
  if (family === "new-api" || family === "new-api-legacy" || family === "unknown") return "new-api";
  if (family === "veloera") return "veloera";
  return null;
}

/** What the site's `/api/status` says about check-in: whether it is on, and whether new-api wants Turnstile for it. */
export function checkinSettings(status: Record<string, unknown>, kind: CheckinFamily) {
  return {
    enabled: kind === "new-api" ? status.checkin_enabled === true : status.check_in_enabled === true,
    turnstile: kind === "new-api" && status.turnstile_check === true,
  };
}

export const checkinStatusRequest = (kind: CheckinFamily, month: string): WriteRequest =>
  kind === "new-api"
    ? { method: "GET", path: "/api/user/checkin", query: { month } }
    : { method: "GET", path: "/api/user/check_in_status" };

export const checkinRequest = (kind: CheckinFamily): WriteRequest =>
  kind === "new-api" ? { method: "POST", path: "/api/user/checkin" } : { method: "POST", path: "/api/user/check_in" };

/** A month's check-ins as new-api keeps them (Veloera keeps no record the user can read). */
export type CheckinRecord = { date: string; quota: number };

/** The check-in status from the site's answer: done today, and the month's record where the family has one. */
export function checkinStatusOf(
  kind: CheckinFamily,
  data: unknown,
): { checkedInToday: boolean; records: CheckinRecord[] | null; monthQuota: number | null } {
  if (kind === "veloera") {
    return { checkedInToday: isRow(data) && data.can_check_in === false, records: null, monthQuota: null };
  }
  const stats = isRow(data) && isRow(data.stats) ? data.stats : {};
  const records = Array.isArray(stats.records)
    ? stats.records
        .filter(isRow)
        .map((r) => ({
          date: typeof r.checkin_date === "string" ? r.checkin_date.slice(0, 10) : "",
          quota: typeof r.quota_awarded === "number" ? r.quota_awarded : 0,
        }))
        .filter((r) => /^\d{4}-\d{2}-\d{2}$/.test(r.date))
        .slice(0, 31)
    : [];
  return {
    checkedInToday: stats.checked_in_today === true,
    records,
    monthQuota: records.reduce((s, r) => s + r.quota, 0),
  };
}

/** The reward of a check-in: new-api `quota_awarded`, Veloera `quota`. */
export function checkinReward(data: unknown): number | null {
  if (!isRow(data)) return null;
  const n = data.quota_awarded ?? data.quota;
  return typeof n === "number" && Number.isFinite(n) ? n : null;
}

/** The messages that mean "already done today", per family. */
export const ALREADY_CHECKED_IN = /今日已签到|你今天已经签到过了/;
/** new-api's refusals of a check-in without a Turnstile token. */
export const TURNSTILE_NEEDED = /Turnstile/i;
