/**
 * The zone a page's times and days are in, and the date ranges of 用量分析 (calendar days in that
 * zone) with their presets. A workspace's page is in the workspace's zone, the one its alerts and
 * digests use; a browser's own accounts are in the browser's zone.
 */
import { TZDate } from "@date-fns/tz";

export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/**
 * The page's zone lives on the window: the bundler may give each chunk its own copy of this
 * module, and a module variable would then be the page's in one and null in another.
 */
const page = () => (typeof window === "undefined" ? null : (window as { gdPageZone?: string | null }));

/**
 * Sets the page's zone (a workspace's), or back to the browser's with null. Called while the page
 * renders, before anything below it reads `zone()`; on the server it changes nothing (shared by
 * every request there).
 */
export function setPageZone(tz: string | null): void {
  const w = page();
  if (w) w.gdPageZone = tz;
}

/** The zone the page's times are in. */
export const zone = () => page()?.gdPageZone ?? browserZone();

/** `2026-11-22 23:05:09`: an instant in the page's zone. */
export function inZone(at: Date): string {
  // sv-SE writes ISO-like dates and a 24-hour clock.
  return new Intl.DateTimeFormat("sv-SE", {
    timeZone: zone(),
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  }).format(at);
}

/** The instant a wall-clock time of the page's zone (`2026-11-22T23:05`, a datetime-local field's) is. */
export function fromZone(local: string): Date {
  const [y, mo, d, h, mi] = local.split(/[-T: ]/).map(Number) as [number, number, number, number, number];
  return new Date(new TZDate(y, mo - 1, d, h, mi, zone()).getTime());
}

/** The calendar day `offset` days after `day` (YYYY-MM-DD, plain calendar arithmetic). */
function shift(day: string, offset: number): string {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + offset)).toISOString().slice(0, 10);
}

/** The calendar day (YYYY-MM-DD) in the page's zone, `offset` days from today. */
export function day(offset = 0, now = new Date()): string {
  return shift(inZone(now).slice(0, 10), offset);
}

export type Range = { from: string; to: string };

/** The first day of the month `back` months before the page's current one. */
const monthStart = (back: number) => {
  const [y, m] = day().split("-").map(Number) as [number, number];
  return new Date(Date.UTC(y, m - 1 - back, 1)).toISOString().slice(0, 10);
};

export const PRESETS: Array<{ key: string; label: string; range: () => Range }> = [
  { key: "today", label: "今天", range: () => ({ from: day(), to: day() }) },
  { key: "7d", label: "7 天", range: () => ({ from: day(-6), to: day() }) },
  { key: "30d", label: "30 天", range: () => ({ from: day(-29), to: day() }) },
  { key: "month", label: "本月", range: () => ({ from: monthStart(0), to: day() }) },
  { key: "last-month", label: "上月", range: () => ({ from: monthStart(1), to: shift(monthStart(0), -1) }) },
];
