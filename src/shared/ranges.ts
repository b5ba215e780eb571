/**
 * The rule of every date range, one for the service and the pages: `to` is never before `from`,
 * and a range spans at most MAX_RANGE_DAYS calendar days; refused in the same words on both sides.
 */

/** The longest range any endpoint reads at once, in calendar days. */
export const MAX_RANGE_DAYS = 800;

export const RANGE_WORDS = {
  reversed: "结束日期不能早于开始日期",
  tooLong: `日期范围最长 ${MAX_RANGE_DAYS} 天`,
} as const;

/** Calendar days from `from` to `to` (YYYY-MM-DD), both included less one: 0 for one day. */
const span = (from: string, to: string) =>
  (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000;

/** Why a range of two calendar days is refused, in words; null when it is not. */
export function rangeRefusal(from: string, to: string): string | null {
  const days = span(from, to);
  if (days < 0) return RANGE_WORDS.reversed;
  if (days >= MAX_RANGE_DAYS) return RANGE_WORDS.tooLong;
  return null;
}
