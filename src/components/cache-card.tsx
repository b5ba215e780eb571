"use client";

/**
 * 缓存 in 用量分析: the range's cache reads and writes, the hit rate, and what the cache saved (or
 * its writes cost) at the logged ratios, by day (charted), model, token or account.
 */
import { useState } from "react";
import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from "recharts";
import { trpc } from "@/src/trpc/react";
import type { RouterOutputs } from "@/src/trpc/answers";
import { formatUsd } from "@/src/shared/money";
import { formatNumber } from "./format";
import { Empty, Failed, Stat, useAnswer } from "./site-data";
import { COLORS, Chart, tokens } from "./usage-charts";
import type { Range } from "./usage-range";

type Cache = RouterOutputs["usage"]["cache"]["data"];
type GroupBy = Cache["groupBy"];

const GROUPS: Array<{ key: GroupBy; label: string }> = [
  { key: "day", label: "按天" },
  { key: "model", label: "按模型" },
  { key: "token", label: "按令牌" },
  { key: "account", label: "按账户" },
];

const rate = (r: number | null) => (r === null ? "—" : `${(r * 100).toFixed(1)}%`);

function CacheTable({ rows, label, total }: { rows: Cache["rows"]; label: string; total: Cache["totals"] }) {
  return (
    <div className="table-wrap chart-table" role="region" aria-label="缓存明细表格" tabIndex={0}>
      <table className="table">
        <thead>
          <tr>
            <th>{label}</th>
            <th className="num">输入 tokens</th>
            <th className="num">缓存读取</th>
            <th className="num">缓存写入</th>
            <th className="num">命中率</th>
            <th className="num">节省</th>
            <th className="num">写入成本</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key}>
              <td>{r.key || "（未命名）"}</td>
              <td className="num">{formatNumber(r.inputTokens)}</td>
              <td className="num">{formatNumber(r.cacheRead)}</td>
              <td className="num">{formatNumber(r.cacheWrite)}</td>
              <td className="num">{rate(r.hitRate)}</td>
              <td className="num">{formatUsd(r.savedUsd)}</td>
              <td className="num">{formatUsd(r.costUsd)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th>合计</th>
            <th className="num">{formatNumber(total.inputTokens)}</th>
            <th className="num">{formatNumber(total.cacheRead)}</th>
            <th className="num">{formatNumber(total.cacheWrite)}</th>
            <th className="num">{rate(total.hitRate)}</th>
            <th className="num">{formatUsd(total.savedUsd)}</th>
            <th className="num">{formatUsd(total.costUsd)}</th>
          </tr>
        </tfoot>
      </table>
    </div>
  );
}

export function CacheCard({ range, tz, accounts }: { range: Range; tz: string; accounts: "active" | "all" }) {
  const [groupBy, setGroupBy] = useState<GroupBy>("model");
  const query = trpc.usage.cache.useQuery({ ...range, tz, accounts, groupBy });
  const answer = useAnswer(query);
  const cache = answer.data;
  const label = GROUPS.find((g) => g.key === groupBy)?.label.slice(1) ?? "";
  return (
    <section className="card" aria-labelledby="cache-title">
      <div className="card-head">
        <h2 id="cache-title">缓存</h2>
        <span className="muted">按日志记录的倍率：缓存读取比完整输入价省下的，缓存写入多花的</span>
      </div>
      {answer.loading ? (
        <p className="state">正在读取账本…</p>
      ) : !cache ? (
        <Failed message={answer.message ?? ""} onRetry={() => void query.refetch()} />
      ) : cache.totals.inputTokens === 0 ? (
        <Empty>{cache.pending ? "新同步的日志尚未计入，后台一分钟内完成" : "这段时间没有消费记录"}</Empty>
      ) : (
        <>
          <div className="stats">
            <Stat
              label="命中率"
              value={rate(cache.totals.hitRate)}
              note={`输入 ${tokens(cache.totals.inputTokens)} tokens 中缓存读取 ${tokens(cache.totals.cacheRead)}`}
            />
            <Stat label="缓存节省" value={formatUsd(cache.totals.savedUsd)} note="缓存读取按其倍率计费" />
            <Stat
              label="缓存写入成本"
              value={formatUsd(cache.totals.costUsd)}
              note={`写入 ${tokens(cache.totals.cacheWrite)} tokens`}
            />
            <Stat
              label="净节省"
              value={formatUsd(cache.totals.savedUsd - cache.totals.costUsd)}
              note="节省减去写入成本"
            />
          </div>
          {cache.totals.cacheRead + cache.totals.cacheWrite === 0 && (
            <p className="muted">这段时间的日志没有记录缓存（one-api 不记录；其他站点只在用到缓存时记录）。</p>
          )}
          <div className="segmented" role="group" aria-label="缓存分组">
            {GROUPS.map((g) => (
              <button key={g.key} type="button" aria-pressed={g.key === groupBy} onClick={() => setGroupBy(g.key)}>
                {g.label}
              </button>
            ))}
          </div>
          {groupBy === "day" && (
            <Chart height={220}>
              <BarChart
                data={cache.rows.map((r) => ({ ...r, day: r.key.slice(5) }))}
                margin={{ top: 8, right: 8, bottom: 0, left: 0 }}
              >
                <CartesianGrid strokeDasharray="3 3" vertical={false} />
                <XAxis dataKey="day" tick={{ fontSize: 12 }} />
                <YAxis tick={{ fontSize: 12 }} tickFormatter={(v: number) => `$${v}`} width={56} />
                <Tooltip formatter={(v) => formatUsd(Number(v))} />
                <Legend wrapperStyle={{ fontSize: 12 }} />
                <Bar dataKey="savedUsd" name="节省" fill={COLORS[2]} isAnimationActive={false} />
                <Bar dataKey="costUsd" name="写入成本" fill={COLORS[3]} isAnimationActive={false} />
              </BarChart>
            </Chart>
          )}
          <CacheTable rows={cache.rows} label={label} total={cache.totals} />
        </>
      )}
    </section>
  );
}
