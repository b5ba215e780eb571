"use client";

/**
 * 速度 in 用量分析: per model, each site's median and 90th percentile of total and first-token time
 * over the range, the fastest marked, so a person sees which account answers a model soonest.
 */
import { trpc } from "@/src/trpc/react";
import { formatDuration, formatNumber } from "./format";
import { Empty, Failed, useAnswer } from "./site-data";
import type { Range } from "./usage-range";

const ms = (v: number | null) => formatDuration(v === null ? null : Math.round(v));

export function SpeedCard({ range, tz, accounts }: { range: Range; tz: string; accounts: "active" | "all" }) {
  const query = trpc.usage.speed.useQuery({ ...range, tz, accounts });
  const answer = useAnswer(query);
  const speed = answer.data;
  return (
    <section className="card" aria-labelledby="speed-title">
      <div className="card-head">
        <h2 id="speed-title">速度</h2>
        <span className="muted">各站点各模型的总用时与首字用时（中位数 / 90 分位），按日志</span>
      </div>
      {answer.loading ? (
        <p className="state">正在读取账本…</p>
      ) : !speed ? (
        <Failed message={answer.message ?? ""} onRetry={() => void query.refetch()} />
      ) : speed.rows.length === 0 ? (
        <Empty>这段时间没有记录用时的消费</Empty>
      ) : (
        <div className="table-wrap chart-table" role="region" aria-label="速度明细表格" tabIndex={0}>
          <table className="table">
            <thead>
              <tr>
                <th>模型</th>
                <th>站点</th>
                <th className="num">请求</th>
                <th className="num">总用时 中位数</th>
                <th className="num">总用时 90%</th>
                <th className="num">首字 中位数</th>
                <th className="num">首字 90%</th>
              </tr>
            </thead>
            <tbody>
              {speed.rows.map((r) => (
                <tr key={`${r.model} ${r.site.id}`}>
                  <td>{r.model || "（未命名）"}</td>
                  <td>
                    {r.site.name} {r.fastest && <span className="tag tag-enabled">最快</span>}
                  </td>
                  <td
                    className="num"
                    title={`其中 ${formatNumber(r.timedRequests)} 次记录了总用时，${formatNumber(r.firstTokenRequests)} 次记录了首字用时`}
                  >
                    {formatNumber(r.requests)}
                  </td>
                  <td className="num">{ms(r.totalP50Ms)}</td>
                  <td className="num">{ms(r.totalP90Ms)}</td>
                  <td className="num">{ms(r.firstTokenP50Ms)}</td>
                  <td className="num">{ms(r.firstTokenP90Ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
