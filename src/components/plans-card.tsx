"use client";

/**
 * 套餐 in 用量分析: each account's plans (new-api's subscriptions) with what is left of the current
 * window, the next reset and the end; the range's spend by who paid it; and 可用天数 with the plans
 * folded in beside the wallet alone.
 */
import { trpc } from "@/src/trpc/react";
import type { RouterOutputs } from "@/src/trpc/answers";
import { formatUsd } from "@/src/shared/money";
import { formatLocal, formatNumber } from "./format";
import { Empty, Failed, Stat, useAnswer } from "./site-data";
import type { Range } from "./usage-range";

type Account = RouterOutputs["usage"]["plans"]["data"]["accounts"][number];
type Plan = Account["plans"][number];

const PREFERENCE: Record<NonNullable<Account["preference"]>, string> = {
  subscription_first: "优先用套餐",
  wallet_first: "优先用钱包",
  subscription_only: "只用套餐",
  wallet_only: "只用钱包",
};
const PERIOD: Record<NonNullable<Plan["resetPeriod"]>, string> = {
  never: "不重置",
  daily: "每天重置",
  weekly: "每周重置",
  monthly: "每月重置",
  custom: "按周期重置",
};
const SOURCE: Record<string, string> = { order: "购买", balance: "余额购买", admin: "管理员赠送" };
const STATUS: Record<Plan["status"], string> = { active: "生效中", expired: "已到期", cancelled: "已取消" };

const days = (n: number | null) => (n === null ? "—" : n >= 3650 ? "10 年以上" : `${n} 天`);

function daysUntil(iso: string | null): string {
  if (!iso) return "";
  const d = (Date.parse(iso) - Date.now()) / 86_400_000;
  if (d <= 0) return "";
  return d < 1 ? `（${Math.max(1, Math.round(d * 24))} 小时后）` : `（${Math.floor(d)} 天后）`;
}

function PlanRow({ p }: { p: Plan }) {
  const used = p.usedPct ?? 0;
  return (
    <li className="plan">
      <div className="plan-head">
        <strong>{p.title}</strong>
        <span className={`tag ${p.status === "active" ? "tag-enabled" : "tag-disabled"}`}>{STATUS[p.status]}</span>
        <span className="muted">
          {SOURCE[p.source] ?? p.source}
          {p.resetPeriod ? ` · ${PERIOD[p.resetPeriod]}` : ""}
          {p.overflow ? "" : " · 用完不改用钱包"}
        </span>
      </div>
      {p.totalUsd === null ? (
        <p className="plan-figures">不限额，本周期已用 {formatUsd(p.usedUsd)}</p>
      ) : (
        <>
          <div
            className={`progress${used >= 90 ? " progress-low" : ""}`}
            role="progressbar"
            aria-label={`${p.title} 本周期已用`}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={Math.round(used)}
          >
            <span style={{ width: `${Math.min(100, used)}%` }} />
          </div>
          <p className="plan-figures">
            本周期剩余 <strong>{formatUsd(p.remainingUsd ?? 0)}</strong> / {formatUsd(p.totalUsd)}（已用 {used}%）
          </p>
        </>
      )}
      <p className="plan-figures muted">
        {p.nextResetAt && p.status === "active" ? `下次重置 ${formatLocal(p.nextResetAt)} · ` : ""}
        {p.status === "active" ? "到期" : "结束于"} {formatLocal(p.endsAt)}
        {p.status === "active" ? daysUntil(p.endsAt) : ""}
      </p>
    </li>
  );
}

export function PlansCard({ range, tz, accounts }: { range: Range; tz: string; accounts: "active" | "all" }) {
  const query = trpc.usage.plans.useQuery({ ...range, tz, accounts });
  const answer = useAnswer(query);
  const plans = answer.data;
  return (
    <section className="card" aria-labelledby="plans-title">
      <div className="card-head">
        <h2 id="plans-title">套餐</h2>
        <span className="muted">new-api 站点出售的套餐：剩余额度、重置与到期，消费由谁支付</span>
      </div>
      {answer.loading ? (
        <p className="state">正在读取账本…</p>
      ) : !plans ? (
        <Failed message={answer.message ?? ""} onRetry={() => void query.refetch()} />
      ) : plans.accounts.length === 0 ? (
        <Empty>所选账户的站点不出售套餐（new-api 自 2026 年 2 月起提供）</Empty>
      ) : (
        <>
          <div className="stats">
            <Stat
              label="套餐支付"
              value={formatUsd(plans.totals.planSpendUsd)}
              note={`${formatNumber(plans.totals.planRequests)} 次请求，钱包未扣费`}
            />
            <Stat
              label="钱包支付"
              value={formatUsd(plans.totals.walletSpendUsd)}
              note={`${range.from} 至 ${range.to}`}
            />
            <Stat label="生效中的套餐" value={String(plans.totals.activePlans)} note="同步时每 15 分钟读取一次" />
          </div>
          {plans.accounts.map((a) => (
            <div key={a.key} className="plan-account">
              <h3>
                {a.account} <span className="muted">{a.site}</span>
              </h3>
              <p className="muted">
                {a.preference ? `${PREFERENCE[a.preference]} · ` : ""}
                按近 7 天的速度，钱包与套餐还能用 <strong>{days(a.daysLeft)}</strong>（只用钱包 {days(a.walletDaysLeft)}
                ）
              </p>
              {a.plans.length === 0 ? (
                <p className="muted">没有生效中的套餐</p>
              ) : (
                <ul className="plans">
                  {a.plans.map((p) => (
                    <PlanRow key={p.id} p={p} />
                  ))}
                </ul>
              )}
            </div>
          ))}
        </>
      )}
    </section>
  );
}
