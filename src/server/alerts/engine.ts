/**
 * The rules and the alert state machine (docs/design.md 21), without a database: what a rule says of
 * an account's figures, and what an alert does next. An alert opens when its condition has held
 * on two evaluations in a row (a blip is not an alert), is sent once, stays silent while it holds
 * (a daily reminder if asked), is sent again only when it gets worse by the rule's step, and is
 * resolved when the condition has been clear on two evaluations in a row (flapping is damped both
 * ways).
 */

export const RULE_KINDS = [
  "balance_below",
  "days_left_below",
  "spend_today_above",
  "token_refused",
  "site_down",
  "checkin_failed",
  "unmatched_move",
  "spend_spike",
  "price_changed",
  "overcharged_above",
  "overcharged_share_above",
  "plan_ending_within",
  "plan_used_above",
] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

/**
 * Kinds that tell of an event rather than a state: their alert ends when the event leaves the
 * window, which is no news (a price that rose has not come back), so it ends without a message.
 */
const EVENT_KINDS = new Set<RuleKind>(["price_changed"]);

/** What a rule needs of an account, from the ledger and the saved account (null: not known). */
export type Facts = {
  balanceUsd: number | null;
  /** Days the balance lasts at the average daily spend of the last 7 days; null without spend. */
  daysLeft: number | null;
  spendTodayUsd: number | null;
  /** The site refuses the saved token (需要重新授权). */
  refused: boolean;
  /** Minutes since the site last answered a sync, while its syncs fail; null while it answers. */
  downMinutes: number | null;
  /** Today's automatic check-in failed or needs a manual step. */
  checkinProblem: string | null;
  /** The largest balance move of yesterday and today that the log does not explain (USD, signed); null: none. */
  unmatchedUsd: number | null;
  /** The median spend of the last 7 days up to this hour of the day (USD). */
  sameHourMedianUsd: number | null;
  /**
   * The models the account called in the last 7 days whose price on its site rose (percent) or
   * that left the list (null) in the last day, the largest first.
   */
  priceRises: Array<{ model: string; risePct: number | null; text: string }>;
  /**
   * 核对 of the last 24 hours: what was charged above the lower of the entries' own ratios and the
   * site's list (USD), and its share of the spend verified in that time (percent); null: none.
   */
  overcharged: { usd: number; pct: number | null } | null;
  /** The account's plans in force (new-api's subscriptions): when each ends, how much of its window is used. */
  plans: Array<{
    title: string;
    endsInDays: number;
    ends: string;
    usedPct: number | null;
    remainingUsd: number | null;
  }>;
};

/** Below this, a day's spend is too small to call a spike (a few cents against none). */
const SPIKE_FLOOR_USD = 0.05;

export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export type Check = { holds: boolean; value: number | null; text: string };

const usd = (n: number) => `$${n.toFixed(2)}`;
/** Cents where they are enough, four places below a dollar (an overcharge is often a few cents). */
const usdFine = (n: number) => (n >= 1 ? usd(n) : `$${n.toFixed(4)}`);

/** Whether the rule's condition holds for these figures, its figure, and the words for it. */
export function check(kind: RuleKind, threshold: number | null, f: Facts): Check {
  const t = threshold ?? 0;
  switch (kind) {
    case "balance_below":
      return f.balanceUsd === null
        ? { holds: false, value: null, text: "余额未知" }
        : { holds: f.balanceUsd < t, value: f.balanceUsd, text: `余额 ${usd(f.balanceUsd)}，低于 ${usd(t)}` };
    case "days_left_below":
      return f.daysLeft === null
        ? { holds: false, value: null, text: "近 7 天没有消费" }
        : {
            holds: f.daysLeft < t,
            value: f.daysLeft,
            text: `按近 7 天的消费速度，余额约可用 ${f.daysLeft.toFixed(1)} 天，少于 ${t} 天`,
          };
    case "spend_today_above":
      return f.spendTodayUsd === null
        ? { holds: false, value: null, text: "今日消费未知" }
        : {
            holds: f.spendTodayUsd > t,
            value: f.spendTodayUsd,
            text: `今日消费 ${usd(f.spendTodayUsd)}，超过 ${usd(t)}`,
          };
    case "token_refused":
      return { holds: f.refused, value: null, text: "站点拒绝了保存的访问令牌，需要重新授权" };
    case "site_down":
      return f.downMinutes === null
        ? { holds: false, value: null, text: "站点可以访问" }
        : {
            holds: f.downMinutes >= t,
            value: f.downMinutes,
            text: `站点已 ${Math.round(f.downMinutes)} 分钟无法访问`,
          };
    case "checkin_failed":
      return { holds: f.checkinProblem !== null, value: null, text: f.checkinProblem ?? "签到正常" };
    case "spend_spike": {
      const base = f.sameHourMedianUsd;
      const today = f.spendTodayUsd;
      if (today === null || base === null || today < SPIKE_FLOOR_USD) {
        return { holds: false, value: null, text: "今日消费正常" };
      }
      // No spend at this hour on most of the last 7 days: any real spend today is a spike.
      const ratio = today / Math.max(base, SPIKE_FLOOR_USD / t);
      return {
        holds: ratio > t,
        value: Math.round(ratio * 10) / 10,
        text: `今日到此刻消费 ${usd(today)}，是近 7 天同一时刻中位数 ${usd(base)} 的 ${ratio.toFixed(1)} 倍`,
      };
    }
    case "price_changed": {
      const over = f.priceRises.filter((r) => r.risePct === null || r.risePct >= t);
      if (over.length === 0) return { holds: false, value: null, text: "所用模型价格未上涨" };
      const named = over.slice(0, 3).map((r) => r.text);
      const more = over.length > 3 ? `，另有 ${over.length - 3} 个模型` : "";
      return { holds: true, value: over[0]!.risePct, text: `${named.join("；")}${more}` };
    }
    case "overcharged_above": {
      const o = f.overcharged;
      if (o === null || o.usd <= 0)
        return { holds: false, value: null, text: "近 24 小时的扣费与日志倍率、价目表相符" };
      const share = o.pct === null ? "" : `（占这段时间消费的 ${o.pct.toFixed(1)}%）`;
      return {
        holds: o.usd > t,
        value: Math.round(o.usd * 1e4) / 1e4,
        text: `近 24 小时多扣了 ${usdFine(o.usd)}${share}：扣费高于日志倍率或站点价目表，详见 用量分析 → 核对`,
      };
    }
    case "overcharged_share_above": {
      const o = f.overcharged;
      if (o === null || o.pct === null || o.usd <= 0)
        return { holds: false, value: null, text: "近 24 小时的扣费与日志倍率、价目表相符" };
      return {
        holds: o.pct > t,
        value: Math.round(o.pct * 10) / 10,
        text: `近 24 小时多扣了 ${usdFine(o.usd)}，占这段时间消费的 ${o.pct.toFixed(1)}%，详见 用量分析 → 核对`,
      };
    }
    case "plan_ending_within": {
      const soon = f.plans.filter((p) => p.endsInDays < t).sort((a, b) => a.endsInDays - b.endsInDays);
      const first = soon[0];
      if (!first) return { holds: false, value: null, text: "没有即将到期的套餐" };
      const days =
        first.endsInDays < 1
          ? `${Math.max(1, Math.round(first.endsInDays * 24))} 小时`
          : `${first.endsInDays.toFixed(1)} 天`;
      const more = soon.length > 1 ? `，另有 ${soon.length - 1} 个套餐` : "";
      return {
        holds: true,
        value: Math.round(first.endsInDays * 10) / 10,
        text: `套餐「${first.title}」将在 ${days}后到期（${first.ends}）${more}`,
      };
    }
    case "plan_used_above": {
      const used = f.plans
        .filter((p) => p.usedPct !== null && p.usedPct >= t)
        .sort((a, b) => (b.usedPct ?? 0) - (a.usedPct ?? 0));
      const top = used[0];
      if (!top) return { holds: false, value: null, text: "套餐额度充足" };
      const left = top.remainingUsd === null ? "" : `，剩余 ${usdFine(top.remainingUsd)}`;
      return {
        holds: true,
        value: top.usedPct,
        text: `套餐「${top.title}」本周期已用 ${(top.usedPct ?? 0).toFixed(1)}%${left}`,
      };
    }
    case "unmatched_move":
      return f.unmatchedUsd === null
        ? { holds: false, value: null, text: "余额变化与日志相符" }
        : {
            holds: Math.abs(f.unmatchedUsd) > t,
            value: Math.abs(f.unmatchedUsd),
            text: `余额变化与日志不符：${f.unmatchedUsd < 0 ? "多扣了" : "多出了"} ${usd(Math.abs(f.unmatchedUsd))}（日志中没有对应记录）`,
          };
  }
}

/** Which way is worse for the rule's figure (escalation); null: the rule has no figure to worsen. */
function worseBy(kind: RuleKind, from: number, to: number): number | null {
  switch (kind) {
    case "balance_below":
    case "days_left_below":
    case "plan_ending_within":
      return from - to;
    case "spend_today_above":
    case "site_down":
    case "unmatched_move":
    case "spend_spike":
    case "price_changed":
    case "overcharged_above":
    case "overcharged_share_above":
    case "plan_used_above":
      return to - from;
    default:
      return null;
  }
}

export type AlertEvent = "opened" | "reminder" | "escalated" | "resolved";

/** A live alert as the machine needs it. */
export type LiveAlert = {
  state: "pending" | "open";
  /** The figure last sent (escalations compare with it). */
  notified: number | null;
  /** When it was last sent (opened, escalated or reminded): the daily reminder counts from it. */
  notifiedAt: Date | null;
  /** Clear once while open: resolved when clear again. */
  clearing: boolean;
};

export type Step =
  | { kind: "none" }
  | { kind: "pend" }
  | { kind: "drop" }
  | { kind: "clearing" }
  | { kind: "hold" }
  /** Resolved without a message (an event kind's window passed). */
  | { kind: "close" }
  | { kind: "send"; event: AlertEvent };

const DAY_MS = 86_400_000;

/** What happens to an alert (or its absence) after one evaluation. */
export function nextStep(
  alert: LiveAlert | null,
  result: Check,
  rule: { kind: RuleKind; step: number | null; remind: boolean },
  now: Date,
): Step {
  if (!alert) return result.holds ? { kind: "pend" } : { kind: "none" };
  if (alert.state === "pending") return result.holds ? { kind: "send", event: "opened" } : { kind: "drop" };
  if (!result.holds) {
    if (!alert.clearing) return { kind: "clearing" };
    return EVENT_KINDS.has(rule.kind) ? { kind: "close" } : { kind: "send", event: "resolved" };
  }
  if (rule.step !== null && rule.step > 0 && result.value !== null && alert.notified !== null) {
    const worse = worseBy(rule.kind, alert.notified, result.value);
    if (worse !== null && worse >= rule.step) return { kind: "send", event: "escalated" };
  }
  if (rule.remind && alert.notifiedAt && now.getTime() - alert.notifiedAt.getTime() >= DAY_MS) {
    return { kind: "send", event: "reminder" };
  }
  return { kind: "hold" };
}
