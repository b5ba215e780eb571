/**
 * Calendar days and midnights in IANA time zones, on `@date-fns/tz` (its offsets come from the
 * platform's zone database; no hand-written offset arithmetic here).
 */
import { TZDate, tzOffset } from "@date-fns/tz";
import { format, startOfDay } from "date-fns";

/** The zone a range or "today" is read in when the request names none. */
export const DEFAULT_TIME_ZONE = "UTC";

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Milliseconds the zone is ahead of UTC at an instant. */
export function offsetAt(tz: string, at: number): number {
  return tzOffset(tz, new Date(at)) * 60_000;
}

/** `2026-11-23 08:57`: the minute an instant falls in, in `tz`. */
export function minuteIn(tz: string, at: number): string {
  return new Date(at + offsetAt(tz, at)).toISOString().slice(0, 16).replace("T", " ");
}

/** The instant of the last local midnight in `tz` at or before `now` (Unix ms). */
export function localMidnight(tz: string, now = Date.now()): number {
  return startOfDay(new TZDate(now, tz)).getTime();
}

/** The calendar day (YYYY-MM-DD) in `tz` at an instant (Unix ms). */
export function dayIn(tz: string, at: number): string {
  return format(new TZDate(at, tz), "yyyy-MM-dd");
}

/** The first instant (Unix ms) of a calendar day (YYYY-MM-DD) in `tz` (after a skipped midnight, the hour it starts). */
export function dayStart(tz: string, day: string): number {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  return new TZDate(y, m - 1, d, tz).getTime();
}

/** The start of each calendar day from..to (inclusive) in `tz`, and of the day after (Unix ms). */
export function dayStarts(tz: string, from: string, to: string): Array<{ day: string; start: number }> {
  const out: Array<{ day: string; start: number }> = [];
  for (let day = from; ; day = nextDay(day)) {
    out.push({ day, start: dayStart(tz, day) });
    if (day > to) return out;
  }
}

/** The calendar day after `day`. */
export function nextDay(day: string): string {
  return addDays(day, 1);
}

/** The calendar day `n` days after `day` (before it when n is negative). */
export function addDays(day: string, n: number): string {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10);
}

/** Whole calendar days from `from` to `to` (0 for the same day; negative when reversed). */
export function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}
