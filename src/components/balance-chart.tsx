"use client";

/**
 * The parts of 用量分析's balance chart: a day's dot, red where 对账 found the balance moved
 * otherwise than the log says, and the tooltip that gives that day's difference.
 */
import { formatUsd } from "@/src/shared/money";

/** A day's balance dot: red and larger on a day whose balance moved otherwise than the log says. */
export function UnmatchedDot(props: {
  /** Which account's line (recharts gives its own `index`: the point's). */
  series: number;
  color: string;
  cx?: number;
  cy?: number;
  payload?: Record<string, number | string>;
}) {
  const { cx, cy, payload, series, color } = props;
  if (cx === undefined || cy === undefined || payload?.[`a${series}`] === undefined) return null;
  const off = payload[`u${series}`] !== undefined;
  return off ? (
    <circle
      className="recharts-line-dot unmatched"
      cx={cx}
      cy={cy}
      r={6}
      fill="var(--danger)"
      stroke="var(--card)"
      strokeWidth={2}
    >
      <title>对账不符</title>
    </circle>
  ) : (
    <circle className="recharts-line-dot" cx={cx} cy={cy} r={3} fill={color} />
  );
}

/** The chart's tooltip: each account's balance, and a day's 对账 difference where there is one. */
export function BalanceTip(props: {
  active?: boolean;
  label?: string;
  payload?: Array<{
    name?: string;
    dataKey?: string;
    value?: number;
    color?: string;
    payload?: Record<string, number | string>;
  }>;
}) {
  if (!props.active || !props.payload?.length) return null;
  return (
    <div className="chart-tip">
      <p>{props.label}</p>
      {props.payload.map((p) => {
        const index = String(p.dataKey ?? "").slice(1);
        const off = p.payload?.[`u${index}`];
        return (
          <p key={p.dataKey} style={{ color: p.color }}>
            {p.name}：{formatUsd(Number(p.value))}
            {off !== undefined && <strong className="failed-text">（对账差额 {formatUsd(Number(off))}）</strong>}
          </p>
        );
      })}
    </div>
  );
}
