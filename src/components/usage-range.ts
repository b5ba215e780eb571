/** The date ranges of 用量分析: calendar days in the browser's zone, and the presets. */

export const zone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** The calendar day (YYYY-MM-DD) in the browser's zone, `offset` days from today. */
export function day(offset = 0, base = new Date()): string {
  const d = new Date(base.getFullYear(), base.getMonth(), base.getDate() + offset);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export type Range = { from: string; to: string };

export const PRESETS: Array<{ key: string; label: string; range: () => Range }> = [
  { key: "today", label: "今天", range: () => ({ from: day(), to: day() }) },
  { key: "7d", label: "7 天", range: () => ({ from: day(-6), to: day() }) },
  { key: "30d", label: "30 天", range: () => ({ from: day(-29), to: day() }) },
  {
    key: "month",
    label: "本月",
    range: () => {
      const now = new Date();
      return { from: day(0, new Date(now.getFullYear(), now.getMonth(), 1)), to: day() };
    },
  },
  {
    key: "last-month",
    label: "上月",
    range: () => {
      const now = new Date();
      return {
        from: day(0, new Date(now.getFullYear(), now.getMonth() - 1, 1)),
        to: day(0, new Date(now.getFullYear(), now.getMonth(), 0)),
      };
    },
  },
];
