/**
 * Check-in (签到) on the families that have it (gateway-actions.md §2.4, §3): new-api's
 * `checkin` and Veloera's `check_in`, switched on per site in its `/api/status`. The status is read
 * first and the site asked to check in only when today's is not done; a site that wants a
 * Turnstile token (new-api with `turnstile_check`) can only be checked in on its own page.
 */
import type { Db } from "../db/client";
import type { Family } from "../gateway/families";
import { usdOf } from "../gateway/reads";
import {
  ALREADY_CHECKED_IN,
  TURNSTILE_NEEDED,
  checkinFamily,
  checkinRequest,
  checkinReward,
  checkinSettings,
  checkinStatusOf,
  checkinStatusRequest,
} from "../gateway/writes";
import { formatMoney } from "../../shared/money";
import {
  SiteDataError,
  forgetAccountReads,
  siteProfile,
  siteStatus,
  siteWrite,
  type Account,
  type SiteDataDeps,
} from "../site-data/calls";
import { recordAction, recordedSend, type Actor } from "./records";
import type { CheckinResult, CheckinStatus } from "./schemas";

const MESSAGES = {
  unsupported: "这类站点没有签到功能",
  disabled: "站点未开启签到",
  manual: "站点要求人机验证（Turnstile），请在站点页面手动签到",
  done: "今天已签到",
  available: "今天还没有签到",
} as const;

/** Where a person checks in by hand: the site itself (its check-in sits in its personal pages, by version). */
const manualUrl = (siteUrl: string) => `${siteUrl.replace(/\/+$/, "")}/`;

/**
 * The site's day now, and when it began (ms since the epoch): Veloera counts UTC days; new-api
 * its server's, read as UTC+8 as most run (its status says whether today's is done, so another
 * zone costs a day's wait at most, never a second check-in).
 */
export function siteDay(family: Family | null, now: number): { day: string; start: number } {
  const offset = family === "veloera" ? 0 : 8 * 3_600_000;
  const day = new Date(now + offset).toISOString().slice(0, 10);
  return { day, start: Date.parse(`${day}T00:00:00Z`) - offset };
}

/** The month (YYYY-MM) new-api's record is asked for, in its day. */
const monthOf = (now: number) => siteDay("new-api", now).day.slice(0, 7);

export async function checkinStatus(account: Account, deps: SiteDataDeps, now = Date.now()): Promise<CheckinStatus> {
  const site = await siteProfile(account, deps);
  const base = { month: null, manualUrl: null, money: site.money };
  const kind = checkinFamily(site.family);
  if (!kind) return { ...base, state: "unsupported", message: MESSAGES.unsupported };
  const settings = checkinSettings(await siteStatus(account, deps), kind);
  if (!settings.enabled) return { ...base, state: "disabled", message: MESSAGES.disabled };
  const answer = await siteWrite(account, checkinStatusRequest(kind, monthOf(now)), deps);
  if (!answer.success) {
    // The site switched it off since its status was read.
    if (/未启用/.test(answer.message)) return { ...base, state: "disabled", message: MESSAGES.disabled };
    throw new SiteDataError(`签到状态读取失败：${answer.message || "站点没有说明原因"}`);
  }
  const status = checkinStatusOf(kind, answer.data);
  const month =
    status.records === null
      ? null
      : {
          checkins: status.records.length,
          quota: status.monthQuota ?? 0,
          usd: usdOf(status.monthQuota ?? 0, site.money),
          records: status.records.map((r) => ({ ...r, usd: usdOf(r.quota, site.money) })),
        };
  if (status.checkedInToday) return { ...base, month, state: "done", message: MESSAGES.done };
  if (settings.turnstile) {
    return { ...base, month, state: "manual", message: MESSAGES.manual, manualUrl: manualUrl(site.url) };
  }
  return { ...base, month, state: "available", message: MESSAGES.available };
}

/** Checks the account in when today's is not done; the outcome is recorded (a status that says "done" is not). */
export async function checkin(db: Db, account: Account, actor: Actor, deps: SiteDataDeps): Promise<CheckinResult> {
  const status = await checkinStatus(account, deps);
  const none = { quota: null, usd: null };
  if (status.state === "unsupported" || status.state === "disabled") {
    return { ...none, state: status.state, message: status.message };
  }
  if (status.state === "done") return { ...none, state: "already", message: "今天已签到，无需重复签到" };
  const site = await siteProfile(account, deps);
  const record = (ok: boolean, message: string, quota: number | null) =>
    recordAction(db, actor, { kind: "checkin", ok, message, quota });
  if (status.state === "manual") {
    await record(false, "需手动签到：站点要求人机验证", null);
    return { ...none, state: "manual", message: status.message };
  }
  const kind = checkinFamily(site.family);
  if (!kind) return { ...none, state: "unsupported", message: MESSAGES.unsupported };
  const answer = await recordedSend(record, () => siteWrite(account, checkinRequest(kind), deps));
  if (!answer.success) {
    if (ALREADY_CHECKED_IN.test(answer.message))
      return { ...none, state: "already", message: "今天已签到，无需重复签到" };
    if (TURNSTILE_NEEDED.test(answer.message)) {
      await record(false, "需手动签到：站点要求人机验证", null);
      return { ...none, state: "manual", message: MESSAGES.manual };
    }
    const message = `签到失败：${answer.message || "站点没有说明原因"}`;
    await record(false, message, null);
    throw new SiteDataError(message);
  }
  forgetAccountReads(account);
  const quota = checkinReward(answer.data);
  const message = quota === null ? "签到成功" : `签到成功，获得 ${formatMoney(quota, site.money)}`;
  await record(true, message, quota);
  return { state: "done", quota, usd: quota === null ? null : usdOf(quota, site.money), message };
}
