/**
 * A small line of a series (a balance over days), drawn as SVG: gaps where a day has no figure,
 * its first and last values in its accessible name.
 */
import { formatUsd } from "@/src/shared/money";

export function Sparkline({
  values,
  label,
  width = 96,
  height = 28,
}: {
  values: Array<number | null>;
  label: string;
  width?: number;
  height?: number;
}) {
  const known = values.filter((v): v is number => v !== null);
  if (known.length < 2) return null;
  const min = Math.min(...known);
  const max = Math.max(...known);
  const x = (i: number) => (values.length === 1 ? width / 2 : (i / (values.length - 1)) * (width - 2) + 1);
  const y = (v: number) => (max === min ? height / 2 : height - 2 - ((v - min) / (max - min)) * (height - 4));
  // One polyline per run of known values.
  const runs: string[] = [];
  let run: string[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (run.length > 0) runs.push(run.join(" "));
      run = [];
    } else run.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
  });
  if (run.length > 0) runs.push(run.join(" "));
  const first = known[0]!;
  const last = known[known.length - 1]!;
  const trend = last < first ? "down" : last > first ? "up" : "flat";
  return (
    <svg
      className={`sparkline sparkline-${trend}`}
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      preserveAspectRatio="none"
      role="img"
      aria-label={`${label}：${formatUsd(first)} → ${formatUsd(last)}`}
    >
      {runs.map((points) => (
        <polyline key={points} points={points} fill="none" strokeWidth="1.5" vectorEffect="non-scaling-stroke" />
      ))}
    </svg>
  );
}
