import { z } from "zod";
import { optionalParam } from "./params";
import { MAX_RANGE_DAYS, RANGE_WORDS } from "../../../shared/ranges";
import { DEFAULT_TIME_ZONE, addDays, dayIn, dayStart, daysBetween, isTimeZone, nextDay } from "../../core/time";

/**
 * The one date format of every range parameter (usage log, analytics, exports): `from` and `to`
 * are calendar days `YYYY-MM-DD` in `tz` (an IANA name, default UTC), both included; Unix seconds
 * are accepted as an alias (`from` at that second, `to` up to and including it). A range spans at
 * most MAX_RANGE_DAYS calendar days; `to` is never before `from`.
 */

/** The range of the analytics and the exports when none is asked: the last 30 days. */
const DEFAULT_RANGE_DAYS = 30;

/** The last second a date may name (year 2999). */
const MAX_SECONDS = 32_503_680_000;

const validDay = (d: string) => {
  const t = Date.parse(`${d}T00:00:00Z`);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 10) === d && d >= "2000-01-01" && d <= "2999-12-31";
};

/** A calendar day, as asked. */
const calendarDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine(validDay);

/** A day or Unix seconds. */
const dateParam = z.union([
  calendarDay.transform((day) => ({ day })),
  z
    .union([
      z.number(),
      z
        .string()
        .regex(/^\d{1,12}$/)
        .transform(Number),
    ])
    .pipe(z.number().int().min(0).max(MAX_SECONDS))
    .transform((seconds) => ({ seconds })),
]);

type DateParam = z.output<typeof dateParam>;

/** An IANA zone name; UTC when absent. */
export const tzParam = optionalParam(z.string().max(64).refine(isTimeZone)).transform((tz) => tz ?? DEFAULT_TIME_ZONE);

/** The fields every ranged endpoint takes, described for the OpenAPI document. */
export const rangeShape = {
  from: optionalParam(dateParam).meta({
    description: "起始日 YYYY-MM-DD（tz 时区的日历日，含当天）；也可以是 Unix 秒",
  }),
  to: optionalParam(dateParam).meta({
    description: `结束日 YYYY-MM-DD（含当天）；也可以是 Unix 秒（含该秒）。不早于 from，跨度至多 ${MAX_RANGE_DAYS} 天`,
  }),
  tz: tzParam.meta({ description: "IANA 时区名，默认 UTC" }),
};

/** A range settled in its zone: the calendar days it touches and its instants (Unix seconds, `end` excluded). */
type ParsedRange = { from: string; to: string; tz: string; start: number; end: number };

type Asked = { from?: DateParam; to?: DateParam; tz: string };

const startOf = (tz: string, p: DateParam) => ("day" in p ? dayStart(tz, p.day) / 1000 : p.seconds);
const endOf = (tz: string, p: DateParam) => ("day" in p ? dayStart(tz, nextDay(p.day)) / 1000 : p.seconds + 1);
const dayOf = (tz: string, p: DateParam) => ("day" in p ? p.day : dayIn(tz, p.seconds * 1000));

/** A reversed range, or one longer than the maximum, refused on `to` in words. */
function checkSpan(fromDay: string, toDay: string, start: number, end: number, ctx: z.RefinementCtx): boolean {
  const span = daysBetween(fromDay, toDay);
  if (end <= start || span < 0) {
    ctx.addIssue({ code: "custom", path: ["to"], message: RANGE_WORDS.reversed });
    return false;
  }
  if (span >= MAX_RANGE_DAYS) {
    ctx.addIssue({ code: "custom", path: ["to"], message: RANGE_WORDS.tooLong });
    return false;
  }
  return true;
}

/**
 * An open range (the usage log): either end may be absent.
 */
export function openRange<T extends Asked>(q: T, ctx: z.RefinementCtx) {
  const { tz } = q;
  const start = q.from && startOf(tz, q.from);
  const end = q.to && endOf(tz, q.to);
  if (q.from && q.to && start !== undefined && end !== undefined) {
    checkSpan(dayOf(tz, q.from), dayOf(tz, q.to), start, end, ctx);
  }
  return { ...q, start, end };
}

/**
 * A closed range (analytics, exports): `to` defaults to today in tz (or `from` when that is
 * later), `from` to DEFAULT_RANGE_DAYS days before `to`.
 */
export function closedRange<T extends Asked>(q: T, ctx: z.RefinementCtx, now = Date.now()) {
  const { tz } = q;
  const today = dayIn(tz, now);
  const toParam: DateParam = q.to ?? (q.from && dayOf(tz, q.from) > today ? q.from : { day: today });
  const to = dayOf(tz, toParam);
  const fromParam: DateParam = q.from ?? { day: addDays(to, -(DEFAULT_RANGE_DAYS - 1)) };
  const range: ParsedRange = {
    from: dayOf(tz, fromParam),
    to,
    tz,
    start: startOf(tz, fromParam),
    end: endOf(tz, toParam),
  };
  checkSpan(range.from, range.to, range.start, range.end, ctx);
  return { ...q, ...range };
}
