"use client";

import { CartesianGrid, Legend, Line, LineChart, Tooltip, XAxis, YAxis } from "recharts";
import { trpc } from "@/src/trpc/react";
import { formatUsd } from "@/src/shared/money";
import { formatLocal } from "./format";
import { Empty, Failed, Loading, TableWrap, useAnswer } from "./site-data";
import { COLORS, Chart } from "./usage-charts";

/** A model's list price on each site over time: a step line per site, and every change in a table. */
export default function PriceHistory({ model }: { model: string }) {
  const query = trpc.prices.history.useQuery({ model });
  const answer = useAnswer(query);
  const sites = answer.data?.sites ?? [];
  // A price holds until its next change: each site's line steps at its changes and runs to now.
  const price = (p: { inputPerMillionUsd: number | null; perCallUsd: number | null }) =>
    p.perCallUsd ?? p.inputPerMillionUsd;
  const times = [...new Set(sites.flatMap((s) => s.points.map((p) => Date.parse(p.at)))), Date.now()].sort(
    (a, b) => a - b,
  );
  const data = times.map((t) => {
    const point: Record<string, number | null> = { t };
    sites.forEach((s, i) => {
      const last = s.points.filter((p) => Date.parse(p.at) <= t).at(-1);
      point[`s${i}`] = last ? price(last) : null;
    });
    return point;
  });
  const perCall = sites.some((s) => s.points.some((p) => p.perCallUsd !== null));
  return (
    <section className="card" aria-labelledby="history-title">
      <h2 id="history-title">{model} 的价格历史</h2>
      <p className="muted">各站点的标价（分组倍率 1），{perCall ? "每次" : "每百万输入 tokens"}，每次变化都有记录。</p>
      {answer.loading ? (
        <Loading label="价格历史" />
      ) : !answer.data ? (
        <Failed message={answer.message ?? ""} onRetry={() => void query.refetch()} />
      ) : sites.length === 0 ? (
        <Empty>你的站点都没有公开这个模型的价格。</Empty>
      ) : (
        <>
          <Chart height={220}>
            <LineChart data={data} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis
                dataKey="t"
                type="number"
                scale="time"
                domain={["dataMin", "dataMax"]}
                tick={{ fontSize: 12 }}
                tickFormatter={(t: number) => formatLocal(new Date(t).toISOString()).slice(5, 10)}
              />
              <YAxis tick={{ fontSize: 12 }} tickFormatter={(v: number) => `$${v}`} width={56} />
              <Tooltip
                labelFormatter={(t) => formatLocal(new Date(Number(t)).toISOString())}
                formatter={(v) => (v === null ? "—" : formatUsd(Number(v)))}
              />
              <Legend wrapperStyle={{ fontSize: 12 }} />
              {sites.map((s, i) => (
                <Line
                  key={s.siteId}
                  dataKey={`s${i}`}
                  name={s.siteName}
                  type="stepAfter"
                  stroke={COLORS[i % COLORS.length]}
                  dot={false}
                  isAnimationActive={false}
                />
              ))}
            </LineChart>
          </Chart>
          <TableWrap label="价格变化">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">时间</th>
                  <th scope="col">站点</th>
                  <th scope="col" className="num">
                    每百万输入
                  </th>
                  <th scope="col" className="num">
                    每百万输出
                  </th>
                  <th scope="col" className="num">
                    每次
                  </th>
                </tr>
              </thead>
              <tbody>
                {sites
                  .flatMap((s) => s.points.map((p) => ({ ...p, siteName: s.siteName })))
                  .sort((a, b) => b.at.localeCompare(a.at))
                  .map((p) => (
                    <tr key={`${p.siteName}${p.at}`}>
                      <td>{formatLocal(p.at)}</td>
                      <td>{p.siteName}</td>
                      {p.inputPerMillionUsd === null && p.perCallUsd === null ? (
                        <td colSpan={3}>下架</td>
                      ) : (
                        <>
                          <td className="num">
                            {p.inputPerMillionUsd === null ? "—" : formatUsd(p.inputPerMillionUsd)}
                          </td>
                          <td className="num">
                            {p.outputPerMillionUsd === null ? "—" : formatUsd(p.outputPerMillionUsd)}
                          </td>
                          <td className="num">{p.perCallUsd === null ? "—" : formatUsd(p.perCallUsd)}</td>
                        </>
                      )}
                    </tr>
                  ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      )}
    </section>
  );
}
