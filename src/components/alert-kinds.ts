import type { RouterOutputs } from "@/src/trpc/answers";

/** The rules' kinds as the 提醒 tab names them: what each watches and the unit of its figure. */

export type Rule = RouterOutputs["alerts"]["rules"]["data"]["rules"][number];
export type Kind = Rule["kind"];

export const KINDS: Array<{ kind: Kind; label: string; unit: string | null; hint: string }> = [
  { kind: "balance_below", label: "余额低于", unit: "美元", hint: "如 5" },
  { kind: "days_left_below", label: "余额可用天数少于", unit: "天", hint: "按近 7 天的消费速度，如 3" },
  { kind: "spend_today_above", label: "今日消费超过", unit: "美元", hint: "如 20" },
  { kind: "token_refused", label: "站点拒绝令牌", unit: null, hint: "" },
  { kind: "site_down", label: "站点无法访问超过", unit: "分钟", hint: "至少 5，如 30" },
  { kind: "checkin_failed", label: "自动签到失败或需手动签到", unit: null, hint: "" },
  { kind: "unmatched_move", label: "对账差额超过", unit: "美元", hint: "余额变化与日志不符的金额，如 1" },
  { kind: "spend_spike", label: "今日消费达到近 7 天同一时刻中位数的", unit: "倍", hint: "如 3" },
  {
    kind: "price_changed",
    label: "所用模型涨价超过",
    unit: "%",
    hint: "近 7 天用过的模型在其站点 24 小时内涨价的幅度，如 10；下架也提醒",
  },
  {
    kind: "overcharged_above",
    label: "近 24 小时多扣超过",
    unit: "美元",
    hint: "扣费高于日志倍率或站点价目表的金额（见 用量分析 → 核对），如 0.5",
  },
  {
    kind: "overcharged_share_above",
    label: "近 24 小时多扣占消费超过",
    unit: "%",
    hint: "多扣金额占这段时间已核对消费的百分比，如 2",
  },
  {
    kind: "plan_ending_within",
    label: "套餐到期前",
    unit: "天",
    hint: "生效中的套餐（new-api）在这么多天内到期，如 3",
  },
  { kind: "plan_used_above", label: "套餐本周期已用超过", unit: "%", hint: "套餐当前周期的额度已用的百分比，如 90" },
];
export const kindOf = (k: Kind) => KINDS.find((x) => x.kind === k) ?? KINDS[0]!;
/** "余额低于 5 美元". */
export function ruleText(r: { kind: Kind; threshold: number | null }): string {
  const k = kindOf(r.kind);
  if (!k.unit || r.threshold === null) return k.label;
  return `${k.label} ${r.threshold}${k.unit === "%" ? "" : " "}${k.unit}`;
}
