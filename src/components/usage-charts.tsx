"use client";

/** The charts' frame and colours, the sums table under them, and their number formats. */
import { ResponsiveContainer } from "recharts";
import { formatCount, formatUsd } from "@/src/shared/money";
import { formatNumber } from "./format";

export const COLORS = [
  "#2563eb",
  "#16a34a",
  "#f59e0b",
  "#dc2626",
  "#7c3aed",
  "#0891b2",
  "#db2777",
  "#65a30d",
  "#9ca3af",
];
/** The lines of the requests-and-tokens chart: requests on the left axis, tokens on the right. */
export const VOLUME_LINES = [
  { key: "requests", name: "请求", axis: "requests" },
  { key: "promptTokens", name: "输入 tokens", axis: "tokens" },
  { key: "completionTokens", name: "输出 tokens", axis: "tokens" },
] as const;

/** Token counts the Chinese way (`36.64万`, `1.2亿`). */
export const tokens = formatCount;

export function Chart({ children, height = 280 }: { children: React.ReactElement; height?: number }) {
  return (
    <div className="chart" style={{ height }}>
      <ResponsiveContainer width="100%" height="100%">
        {children}
      </ResponsiveContainer>
    </div>
  );
}

export type Row = { key: string; requests: number; usd: number; promptTokens: number; completionTokens: number };

/** The table under a chart: one row per group, with totals. */
export function SumsTable({ rows, label, total }: { rows: Row[]; label: string; total: Row }) {
  return (
    <div className="table-wrap chart-table" role="region" aria-label={`${label}明细表格`} tabIndex={0}>
      <table className="table">
        <thead>
          <tr>
            <th>{label}</th>
            <th className="num">请求</th>
            <th className="num">输入 tokens</th>
            <th className="num">输出 tokens</th>
            <th className="num">消费</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key}>
              <td>{r.key || "（未命名）"}</td>
              <td className="num">{formatNumber(r.requests)}</td>
              <td className="num">{formatNumber(r.promptTokens)}</td>
              <td className="num">{formatNumber(r.completionTokens)}</td>
              <td className="num">{formatUsd(r.usd)}</td>
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th>合计</th>
            <th className="num">{formatNumber(total.requests)}</th>
            <th className="num">{formatNumber(total.promptTokens)}</th>
            <th className="num">{formatNumber(total.completionTokens)}</th>
            <th className="num">{formatUsd(total.usd)}</th>
          </tr>
        </tfoot>
      </table>
    </div>
  );
}
