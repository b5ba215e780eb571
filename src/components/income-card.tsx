"use client";

/**
 * 收入与消费 in 用量分析: what came into the accounts each day (top-ups, redeemed codes, check-in and
 * other rewards, refunds) beside what was spent, and the net, charted and in a folded table.
 */
import { Bar, ComposedChart, CartesianGrid, Legend, Line, Tooltip, XAxis, YAxis } from "recharts";
import { trpc } from "@/src/trpc/react";
import { formatUsd } from "@/src/shared/money";
import { Failed, Stat, useAnswer } from "./site-data";
import { COLORS, Chart } from "./usage-charts";
import type { Range } from "./usage-range";

const signed = (usd: number) => (usd > 0 ? `+${formatUsd(usd)}` : formatUsd(usd));

export function IncomeCard({ range, tz, accounts }: { range: Range; tz: string; accounts: "active" | "all" }) {
  const query = trpc.usage.income.useQuery({ ...range, tz, accounts });
  const answer = useAnswer(query);
  const income = answer.data;
  return (
    <section className="card" aria-labelledby="income-title">
      <div className="card-head">
        <h2 id="income-title">收入与消费</h2>
        <span className="muted">充值、兑换码、签到等奖励和退款，与每天的消费、净变化</span>
      </div>
      {answer.loading ? (
        <p className="state">正在读取账本…</p>
      ) : !income ? (
        <Failed message={answer.message ?? ""} onRetry={() => void query.refetch()} />
      ) : (
        <>
          <div className="stats">
            <Stat
              label="收入"
              value={formatUsd(income.totals.incomeUsd)}
              note={`充值 ${formatUsd(income.totals.topupsUsd)} · 兑换码 ${formatUsd(income.totals.redeemedUsd)}`}
            />
            <Stat
              label="签到与奖励"
              value={formatUsd(income.totals.rewardsUsd)}
              note={`退款与补偿 ${formatUsd(income.totals.refundsUsd)}`}
            />
            <Stat
              label="消费"
              value={formatUsd(income.totals.spendUsd)}
              note={
                income.totals.planSpendUsd > 0 || income.totals.plansBoughtUsd > 0
                  ? `其中套餐支付 ${formatUsd(income.totals.planSpendUsd)} · 余额购买套餐 ${formatUsd(income.totals.plansBoughtUsd)}`
                  : `${range.from} 至 ${range.to}`
              }
            />
            <Stat
              label="净变化"
              value={signed(income.totals.netUsd)}
              note={income.totals.planSpendUsd > 0 ? "收入减钱包支付的消费" : "收入减消费"}
            />
          </div>
          <Chart height={220}>
            <ComposedChart
              data={income.rows.map((r) => ({ ...r, label: r.day.slice(5), spend: -r.spendUsd }))}
              margin={{ top: 8, right: 8, bottom: 0, left: 0 }}
            >
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="label" tick={{ fontSize: 12 }} />
              <YAxis tick={{ fontSize: 12 }} tickFormatter={(v: number) => `$${v}`} width={56} />
              <Tooltip formatter={(v) => formatUsd(Number(v))} />
              <Legend wrapperStyle={{ fontSize: 12 }} />
              <Bar dataKey="incomeUsd" name="收入" fill={COLORS[1]} isAnimationActive={false} />
              <Bar dataKey="spend" name="消费" fill={COLORS[3]} isAnimationActive={false} />
              <Line dataKey="netUsd" name="净变化" stroke={COLORS[0]} dot={false} isAnimationActive={false} />
            </ComposedChart>
          </Chart>
          <details className="chart-details">
            <summary>每日明细</summary>
            <div className="table-wrap chart-table" role="region" aria-label="收入明细表格" tabIndex={0}>
              <table className="table">
                <thead>
                  <tr>
                    <th>日期</th>
                    <th className="num">充值</th>
                    <th className="num">兑换码</th>
                    <th className="num">签到与奖励</th>
                    <th className="num">退款</th>
                    <th className="num">消费</th>
                    <th className="num">净变化</th>
                  </tr>
                </thead>
                <tbody>
                  {[...income.rows].reverse().map((r) => (
                    <tr key={r.day}>
                      <td>{r.day}</td>
                      <td className="num">{formatUsd(r.topupsUsd)}</td>
                      <td className="num">{formatUsd(r.redeemedUsd)}</td>
                      <td className="num">{formatUsd(r.rewardsUsd)}</td>
                      <td className="num">{formatUsd(r.refundsUsd)}</td>
                      <td className="num">{formatUsd(r.spendUsd)}</td>
                      <td className="num">{signed(r.netUsd)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </>
      )}
    </section>
  );
}
