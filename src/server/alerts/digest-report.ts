/**
 * What a digest says (docs/design.md 21): over its period, in the workspace's time zone, the spend of
 * each account and each model against the period before, each account's balance and its 预计可用天数
 * (ledger/days-left.ts, the one definition), the open alerts, and the automatic check-ins. Rendered as plain
 * text and as Markdown; the webhook gets the figures as JSON beside them.
 */
import type { Db } from "../db/client";
import { addDays, daysBetween } from "../core/time";
import { lastQuotaOf, summaryOf, type Reader } from "../ledger/analytics";
import { daysLeftOf } from "../ledger/days-left";
import { siteRegistry } from "../sites/registry";
import { formatUsd, round6 } from "../../shared/money";
import {
  heldOf,
  savedAccounts,
  savedName,
  siteIndex,
  type SavedAccount,
  type SiteIndex,
} from "../workspace/saved-accounts";
import { openAlertsOf } from "./history";

export type Cadence = "daily" | "weekly" | "monthly";

export type Period = { from: string; to: string };

const TOP_MODELS = 8;

export type DigestFigures = {
  cadence: Cadence;
  timeZone: string;
  period: Period;
  previous: Period;
  totals: { usd: number; previousUsd: number };
  accounts: Array<{
    id: number;
    name: string;
    site: string | null;
    usd: number;
    previousUsd: number;
    balanceUsd: number | null;
    daysLeft: number | null;
    /** Not read: its site is gone. */
    unread: string | null;
    /** Its token needs renewing: the figures stop at its last sync. */
    reauth: boolean;
  }>;
  models: Array<{ model: string; usd: number; previousUsd: number }>;
  alerts: Array<{ account: string; message: string }>;
  checkins: Array<{ account: string; day: string; state: string; message: string }>;
  /** The monthly statement: how to get it (set when it is sent). */
  statement: { month: string; url: string | null; attached: boolean } | null;
};

/** What a digest message carries to the outbox (the channels render it; the webhook gets it as is). */
export type DigestPayload = {
  event: "digest";
  at: string;
  digest: { title: string; text: string; markdown: string; figures: DigestFigures };
  /** The monthly statement, made for email at send time. */
  statement?: { workspaceId: number; month: string; timeZone: string };
  /**
   * The monthly statement's one-time link for the other channels, made as the message is sent and
   * put where STATEMENT_LINK_MARK stands: the stored message never holds the link's secret.
   */
  link?: { workspaceId: number; month: string; timeZone: string; origin: string };
};

/** Where a message's one-time statement link goes once it is made (DigestPayload.link). */
export const STATEMENT_LINK_MARK = "{{statement-link}}";

/** The period before one of the same length (a month: the calendar month before). */
function previousPeriod(cadence: Cadence, p: Period): Period {
  if (cadence === "monthly") {
    const [y, m] = p.from.split("-").map(Number) as [number, number];
    const start = new Date(Date.UTC(y, m - 2, 1)).toISOString().slice(0, 10);
    return { from: start, to: addDays(p.from, -1) };
  }
  const days = daysBetween(p.from, p.to) + 1;
  return { from: addDays(p.from, -days), to: addDays(p.from, -1) };
}

/**
 * The ledgers of a workspace's saved accounts, read by the server for the workspace itself: an
 * account whose token needs renewing still has the history its syncs copied.
 */
async function readersOfAccounts(db: Db, accounts: SavedAccount[], sites: SiteIndex): Promise<Map<number, Reader>> {
  const registry = siteRegistry(db);
  const out = new Map<number, Reader>();
  for (const a of accounts) {
    const site = sites.get(a.siteId);
    const profiled = site ? await registry.profiled(a.siteId) : null;
    if (!site || !profiled) continue;
    out.set(a.id, {
      siteId: a.siteId,
      siteUserId: a.siteUserId,
      ...heldOf(a),
      key: `saved:${a.id}`,
      sessionId: a.sessionId ?? "",
      site: { id: a.siteId, name: site.name },
      userId: a.siteUserId,
      username: savedName(a),
      alias: a.alias,
      quotaPerUnit: profiled.money.quotaPerUnit,
      money: profiled.money,
    });
  }
  return out;
}

/** The workspace's saved accounts (those not left out of its totals) and their live readers. */
export async function workspaceReaders(db: Db, workspaceId: number) {
  const sites = await siteIndex(db);
  const accounts = (await savedAccounts(db, { timeoutMs: 0, perMinute: 0 }).list(workspaceId, sites)).filter(
    (a) => !a.excluded,
  );
  return { accounts, sites, readers: await readersOfAccounts(db, accounts, sites) };
}

export async function digestFigures(
  db: Db,
  workspaceId: number,
  q: { cadence: Cadence; period: Period; timeZone: string },
): Promise<DigestFigures> {
  const tz = q.timeZone;
  const previous = previousPeriod(q.cadence, q.period);
  const { accounts, sites, readers } = await workspaceReaders(db, workspaceId);
  const from = previous.from;
  const rows: DigestFigures["accounts"] = [];
  for (const a of accounts) {
    const reader = readers.get(a.id);
    const site = sites.get(a.siteId)?.name ?? null;
    const base = { id: a.id, name: savedName(a), site };
    if (!reader) {
      rows.push({
        ...base,
        usd: 0,
        previousUsd: 0,
        balanceUsd: null,
        daysLeft: null,
        unread: "站点已移除",
        reauth: false,
      });
      continue;
    }
    const days = await summaryOf(db, [reader], { from, to: q.period.to, tz, groupBy: "day" });
    const sum = (p: Period) =>
      round6(days.rows.filter((r) => r.key >= p.from && r.key <= p.to).reduce((s, r) => s + r.usd, 0));
    const last = await lastQuotaOf(db, reader);
    const balanceUsd = last === null ? null : round6(last / reader.quotaPerUnit);
    rows.push({
      ...base,
      usd: sum(q.period),
      previousUsd: sum(previous),
      balanceUsd,
      daysLeft: await daysLeftOf(db, reader, last),
      unread: null,
      reauth: a.state === "reauth",
    });
  }
  const all = [...readers.values()];
  const byModel = async (p: Period) =>
    all.length === 0 ? [] : (await summaryOf(db, all, { ...p, tz, groupBy: "model" })).rows;
  const [now_, before] = await Promise.all([byModel(q.period), byModel(previous)]);
  const beforeOf = new Map(before.map((r) => [r.key, r.usd]));
  const models = now_
    .filter((r) => r.usd > 0)
    .slice(0, TOP_MODELS)
    .map((r) => ({ model: r.key || "（未标明模型）", usd: r.usd, previousUsd: beforeOf.get(r.key) ?? 0 }));
  const names = new Map(accounts.map((a) => [a.id, savedName(a)]));
  const alerts = [...(await openAlertsOf(db, workspaceId)).entries()].flatMap(([accountId, list]) =>
    list.map((x) => ({ account: names.get(accountId) ?? "已移除的账户", message: x.message })),
  );
  const checkins = accounts
    .filter((a) => a.autoCheckin && a.checkin && a.checkin.day >= q.period.from)
    .map((a) => ({ account: savedName(a), ...(a.checkin as NonNullable<SavedAccount["checkin"]>) }))
    .map(({ account, day, state, message }) => ({ account, day, state, message }));
  const usd = rows.reduce((s, r) => s + r.usd, 0);
  const previousUsd = rows.reduce((s, r) => s + r.previousUsd, 0);
  return {
    cadence: q.cadence,
    timeZone: tz,
    period: q.period,
    previous,
    totals: { usd: round6(usd), previousUsd: round6(previousUsd) },
    accounts: rows.sort((x, y) => y.usd - x.usd || x.name.localeCompare(y.name)),
    models,
    alerts,
    checkins,
    statement: null,
  };
}

const NAME: Record<Cadence, string> = { daily: "日报", weekly: "周报", monthly: "月报" };
const PREVIOUS: Record<Cadence, string> = { daily: "前一日", weekly: "上一周", monthly: "上月" };

/** "+23%", "−10%", "持平", or "新增" when there was nothing before. */
function change(now: number, before: number): string {
  if (before === 0) return now === 0 ? "持平" : "新增";
  const pct = Math.round(((now - before) / before) * 100);
  return pct === 0 ? "持平" : pct > 0 ? `+${pct}%` : `−${Math.abs(pct)}%`;
}

const CHECKIN_STATE: Record<string, string> = {
  done: "已签到",
  already: "已签过",
  failed: "失败",
  manual: "需手动签到",
  unsupported: "站点不支持签到",
  disabled: "站点未开启签到",
};

export function digestTitle(f: DigestFigures): string {
  const when = f.period.from === f.period.to ? f.period.from : `${f.period.from} 至 ${f.period.to}`;
  return `【${NAME[f.cadence]}】${f.cadence === "monthly" ? f.period.from.slice(0, 7) : when} 消费 ${formatUsd(f.totals.usd)}`;
}

/** The digest's sections as lines; `md` marks headings and list items as Markdown. */
function sections(f: DigestFigures, md: boolean): string[] {
  const h = (s: string) => (md ? `**${s}**` : s);
  const item = (s: string) => `- ${s}`;
  const esc = (s: string) => (md ? s.replace(/([*_`[\]])/g, "\\$1") : s);
  const out: string[] = [];
  out.push(
    `${f.period.from === f.period.to ? f.period.from : `${f.period.from} 至 ${f.period.to}`}（${f.timeZone}）` +
      `消费 ${formatUsd(f.totals.usd)}，${PREVIOUS[f.cadence]} ${formatUsd(f.totals.previousUsd)}（${change(f.totals.usd, f.totals.previousUsd)}）`,
  );
  out.push("", h("按账户"));
  if (f.accounts.length === 0) out.push("工作区中还没有账户");
  for (const a of f.accounts) {
    const who = esc(`${a.name}${a.site ? `（${a.site}）` : ""}`);
    if (a.unread) {
      out.push(item(`${who}：${a.unread}`));
      continue;
    }
    const balance =
      a.balanceUsd === null
        ? "余额未知"
        : `余额 ${formatUsd(a.balanceUsd)}${a.daysLeft !== null ? `，约可用 ${a.daysLeft} 天` : ""}`;
    const stale = a.reauth ? "；令牌需重新授权，数字截至上次同步" : "";
    out.push(item(`${who}：${formatUsd(a.usd)}（${change(a.usd, a.previousUsd)}），${balance}${stale}`));
  }
  if (f.models.length > 0) {
    out.push("", h("按模型"));
    for (const m of f.models) out.push(item(`${esc(m.model)}：${formatUsd(m.usd)}（${change(m.usd, m.previousUsd)}）`));
  }
  out.push("", h(`未恢复的提醒（${f.alerts.length}）`));
  if (f.alerts.length === 0) out.push("没有");
  for (const a of f.alerts) out.push(item(esc(`${a.account}：${a.message}`)));
  if (f.checkins.length > 0) {
    out.push("", h("自动签到"));
    for (const c of f.checkins) {
      const state = CHECKIN_STATE[c.state] ?? c.state;
      const said = c.message && c.message !== state ? `，${c.message}` : "";
      out.push(item(esc(`${c.account} ${c.day}：${state}${said}`)));
    }
  }
  if (f.statement) {
    out.push("", h("对账单"));
    out.push(
      f.statement.attached
        ? `${f.statement.month} 的对账单见附件（PDF）`
        : f.statement.url
          ? `${f.statement.month} 的对账单：${f.statement.url}（7 天内有效，只能下载一次）`
          : `${f.statement.month} 的对账单可在控制台的「导出」中下载`,
    );
  }
  return out;
}

export const digestText = (f: DigestFigures): string => sections(f, false).join("\n");
export const digestMarkdown = (f: DigestFigures): string => sections(f, true).join("\n");
