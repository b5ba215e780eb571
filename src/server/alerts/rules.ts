/**
 * A workspace's alert rules (docs/design.md 21): a condition on one saved account or on every one, the
 * channels it tells, an optional escalation step and daily reminder. A new workspace starts with
 * three, on and editable: balance lasting under 3 days, the token refused, the site down for 30
 * minutes.
 */
import type { Db } from "../db/client";
import { DEFAULT_TIME_ZONE, isTimeZone } from "../core/time";
import { AlertRefused } from "./channels";
import { RULE_KINDS, type RuleKind } from "./engine";
import type { AlertRuleView } from "./schemas";

const MAX_RULES = 100;

/** The threshold each kind needs, its bounds and its words; null: the kind has none. */
const THRESHOLD: Record<RuleKind, { min: number; max: number; what: string } | null> = {
  balance_below: { min: 0.01, max: 1e6, what: "余额（美元）" },
  days_left_below: { min: 0.5, max: 365, what: "天数" },
  spend_today_above: { min: 0.01, max: 1e6, what: "今日消费（美元）" },
  token_refused: null,
  site_down: { min: 5, max: 7 * 24 * 60, what: "分钟数" },
  checkin_failed: null,
  unmatched_move: { min: 0.01, max: 1e6, what: "差额（美元）" },
  spend_spike: { min: 1.5, max: 100, what: "倍数" },
  price_changed: { min: 1, max: 1000, what: "涨价幅度（%）" },
  overcharged_above: { min: 0.01, max: 1e6, what: "多扣金额（美元）" },
  overcharged_share_above: { min: 0.1, max: 100, what: "多扣占消费的百分比" },
  plan_ending_within: { min: 0.5, max: 365, what: "天数" },
  plan_used_above: { min: 1, max: 100, what: "已用百分比" },
};

const DEFAULT_RULES: Array<{ kind: RuleKind; threshold: number | null }> = [
  { kind: "days_left_below", threshold: 3 },
  { kind: "token_refused", threshold: null },
  { kind: "site_down", threshold: 30 },
];

/** Where a workspace's "today" is counted until the person says otherwise. */
const DEFAULT_ALERT_ZONE = "Asia/Shanghai";

const ruleSelect = {
  id: true,
  kind: true,
  accountId: true,
  threshold: true,
  step: true,
  channels: true,
  remind: true,
  muted: true,
  createdAt: true,
} as const;

type RuleRow = {
  id: number;
  kind: string;
  accountId: number | null;
  threshold: number | null;
  step: number | null;
  channels: string;
  remind: boolean;
  muted: boolean;
  createdAt: Date;
};

export type StoredRule = Omit<RuleRow, "kind" | "channels" | "createdAt"> & {
  kind: RuleKind;
  channels: number[];
  createdAt: Date;
};

const stored = (r: RuleRow): StoredRule => ({
  ...r,
  kind: r.kind as RuleKind,
  channels: JSON.parse(r.channels) as number[],
});

export const ruleView = (r: StoredRule): AlertRuleView => ({
  id: r.id,
  kind: r.kind,
  account: r.accountId ?? "all",
  threshold: r.threshold,
  step: r.step,
  remind: r.remind,
  muted: r.muted,
  channels: r.channels,
  createdAt: r.createdAt.toISOString(),
});

export type RuleInput = {
  kind: RuleKind;
  account: number | "all";
  threshold?: number | null | undefined;
  step?: number | null | undefined;
  remind?: boolean | undefined;
  muted?: boolean | undefined;
  channels?: number[] | undefined;
};

/** The threshold checked against its kind's bounds, in words when it is wrong. */
function checkedThreshold(kind: RuleKind, value: number | null | undefined): number | null {
  const rule = THRESHOLD[kind];
  if (!rule) return null;
  if (value === null || value === undefined || !Number.isFinite(value)) throw new AlertRefused(`请填写${rule.what}`);
  if (value < rule.min || value > rule.max) throw new AlertRefused(`${rule.what}须在 ${rule.min} 到 ${rule.max} 之间`);
  return value;
}

function checkedStep(kind: RuleKind, step: number | null | undefined): number | null {
  if (step === null || step === undefined) return null;
  if (!THRESHOLD[kind]) throw new AlertRefused("这类规则没有可以加重的数值，不能设置加重提醒");
  if (!Number.isFinite(step) || step <= 0) throw new AlertRefused("加重幅度须大于 0");
  return step;
}

export function alertRules(db: Db) {
  return {
    /** Up to `limit` workspaces with an unmuted rule whose id is above `after`, in id order (a pass's batch). */
    async workspacesWithRules(after: number, limit: number): Promise<number[]> {
      const rows = await db.alertRule.groupBy({
        by: ["workspaceId"],
        where: { workspaceId: { gt: after }, muted: false },
        orderBy: { workspaceId: "asc" },
        take: limit,
      });
      return rows.map((r) => r.workspaceId);
    },

    async list(workspaceId: number): Promise<StoredRule[]> {
      const rows = await db.alertRule.findMany({ where: { workspaceId }, orderBy: { id: "asc" }, select: ruleSelect });
      return rows.map(stored);
    },

    async get(workspaceId: number, id: number): Promise<StoredRule | null> {
      const row = await db.alertRule.findFirst({ where: { id, workspaceId }, select: ruleSelect });
      return row ? stored(row) : null;
    },

    /** Adds a rule; `account` and `channels` must be the workspace's own (the caller checked them). */
    async create(workspaceId: number, input: RuleInput, now = new Date()): Promise<StoredRule> {
      if (!RULE_KINDS.includes(input.kind)) throw new AlertRefused("不认识的规则类型");
      const count = await db.alertRule.count({ where: { workspaceId } });
      if (count >= MAX_RULES) throw new AlertRefused(`每个工作区至多 ${MAX_RULES} 条规则`);
      const row = await db.alertRule.create({
        data: {
          workspaceId,
          kind: input.kind,
          accountId: input.account === "all" ? null : input.account,
          threshold: checkedThreshold(input.kind, input.threshold),
          step: checkedStep(input.kind, input.step),
          channels: JSON.stringify(input.channels ?? []),
          remind: input.remind ?? false,
          muted: input.muted ?? false,
          createdAt: now,
        },
        select: ruleSelect,
      });
      return stored(row);
    },

    async update(
      workspaceId: number,
      id: number,
      change: Omit<Partial<RuleInput>, "kind" | "account">,
    ): Promise<StoredRule | null> {
      const current = await this.get(workspaceId, id);
      if (!current) return null;
      await db.alertRule.updateMany({
        where: { id, workspaceId },
        data: {
          ...(change.threshold !== undefined ? { threshold: checkedThreshold(current.kind, change.threshold) } : {}),
          ...(change.step !== undefined ? { step: checkedStep(current.kind, change.step) } : {}),
          ...(change.remind !== undefined ? { remind: change.remind } : {}),
          ...(change.muted !== undefined ? { muted: change.muted } : {}),
          ...(change.channels !== undefined ? { channels: JSON.stringify(change.channels) } : {}),
        },
      });
      return this.get(workspaceId, id);
    },

    /** Removes a rule; its live alerts end without a message (their history stays). */
    async remove(workspaceId: number, id: number, now = new Date()): Promise<boolean> {
      const { count } = await db.alertRule.deleteMany({ where: { id, workspaceId } });
      if (count > 0) {
        await db.alert.updateMany({
          where: { ruleId: id, liveKey: { not: null } },
          data: { state: "resolved", resolvedAt: now, liveKey: null },
        });
      }
      return count > 0;
    },

    /** A channel removed from the workspace leaves its rules (they keep their other channels). */
    async dropChannel(workspaceId: number, channelId: number): Promise<void> {
      for (const rule of await this.list(workspaceId)) {
        if (!rule.channels.includes(channelId)) continue;
        const channels = JSON.stringify(rule.channels.filter((c) => c !== channelId));
        await db.alertRule.updateMany({ where: { id: rule.id, workspaceId }, data: { channels } });
      }
    },

    /** The workspace's time zone for "today", and its default rules on first use. */
    async settings(workspaceId: number, now = new Date()): Promise<{ timeZone: string }> {
      const found = await db.alertSettings.findUnique({ where: { workspaceId }, select: { timeZone: true } });
      if (found) return found;
      try {
        await db.alertSettings.create({
          data: { workspaceId, timeZone: DEFAULT_ALERT_ZONE },
          select: { workspaceId: true },
        });
      } catch {
        // Another request made them first.
        return { timeZone: DEFAULT_ALERT_ZONE };
      }
      for (const rule of DEFAULT_RULES) await this.create(workspaceId, { ...rule, account: "all" }, now);
      return { timeZone: DEFAULT_ALERT_ZONE };
    },

    async setTimeZone(workspaceId: number, timeZone: string): Promise<void> {
      if (!isTimeZone(timeZone) && timeZone !== DEFAULT_TIME_ZONE) throw new AlertRefused("时区无效");
      await this.settings(workspaceId);
      await db.alertSettings.updateMany({ where: { workspaceId }, data: { timeZone } });
    },
  };
}
