"use client";

import { PRESETS, type Range } from "./usage-range";

/** The preset buttons and the two days of a date range (用量分析, 如果在别处). */
export function RangePicker({
  preset,
  range,
  onPreset,
  onRange,
}: {
  preset: string | null;
  range: Range;
  onPreset: (key: string) => void;
  onRange: (next: Range) => void;
}) {
  return (
    <>
      <div className="segmented" role="group" aria-label="时间范围">
        {PRESETS.map((p) => (
          <button key={p.key} type="button" aria-pressed={preset === p.key} onClick={() => onPreset(p.key)}>
            {p.label}
          </button>
        ))}
      </div>
      {(["from", "to"] as const).map((end) => (
        <label key={end} className="inline">
          {end === "from" ? "从" : "至"}
          <input
            type="date"
            value={range[end]}
            min={end === "to" ? range.from : undefined}
            max={end === "from" ? range.to : undefined}
            aria-label={end === "from" ? "起始日" : "结束日"}
            onChange={(e) => {
              if (e.target.value) onRange({ ...range, [end]: e.target.value });
            }}
          />
        </label>
      ))}
    </>
  );
}
