/** Time zones by IANA name, with the platform's Intl (no zone database of our own). */

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export function serverTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

const partFormats = new Map<string, Intl.DateTimeFormat>();

/** Milliseconds the zone is ahead of UTC at an instant. */
export function offsetAt(tz: string, at: number): number {
  // Building a formatter costs far more than using one: one per zone, kept.
  let format = partFormats.get(tz);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    partFormats.set(tz, format);
  }
  const parts = format.formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return asUtc - Math.floor(at / 1000) * 1000;
}

/** The instant of the last local midnight in `tz` at or before `now` (Unix ms). */
export function localMidnight(tz: string, now = Date.now()): number {
  const local = new Date(now + offsetAt(tz, now));
  const midnightAsUtc = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate());
  // The offset at midnight itself may differ from now's (a daylight-saving change during the day).
  let guess = midnightAsUtc - offsetAt(tz, midnightAsUtc);
  guess = midnightAsUtc - offsetAt(tz, guess);
  return guess;
}

const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** The calendar day (YYYY-MM-DD) in `tz` at an instant (Unix ms). */
export function dayIn(tz: string, at: number): string {
  let format = dayFormats.get(tz);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" });
    dayFormats.set(tz, format);
  }
  return format.format(new Date(at));
}

/** The instant (Unix ms) a calendar day (YYYY-MM-DD) begins in `tz`. */
export function dayStart(tz: string, day: string): number {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  const asUtc = Date.UTC(y, m - 1, d);
  let guess = asUtc - offsetAt(tz, asUtc);
  guess = asUtc - offsetAt(tz, guess);
  return guess;
}

/**
 * The start of each calendar day from..to (inclusive) in `tz`, and of the day after (Unix ms): one
 * offset lookup a day, the previous day's offset the first guess.
 */
export function dayStarts(tz: string, from: string, to: string): Array<{ day: string; start: number }> {
  const out: Array<{ day: string; start: number }> = [];
  let offset: number | null = null;
  for (let day = from; ; day = nextDay(day)) {
    const [y, m, d] = day.split("-").map(Number) as [number, number, number];
    const asUtc = Date.UTC(y, m - 1, d);
    let start: number = asUtc - (offset ?? offsetAt(tz, asUtc));
    const actual = offsetAt(tz, start);
    if (actual !== asUtc - start) {
      // The offset changed (daylight saving): settle it as dayStart does.
      start = dayStart(tz, day);
      offset = asUtc - start;
    } else {
      offset = actual;
    }
    out.push({ day, start });
    if (day > to) return out;
  }
}

/** The calendar day after `day`. */
export function nextDay(day: string): string {
  const [y, m, d] = day.split("-").map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}
