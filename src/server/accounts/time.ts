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

/** Milliseconds the zone is ahead of UTC at an instant. */
function offsetAt(tz: string, at: number): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: tz,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(new Date(at));
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
