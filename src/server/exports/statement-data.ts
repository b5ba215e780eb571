/**
 * What a month's statement holds for one account, gathered from the ledger: spend by day, model
 * and token, the range the ledger covers, the opening and closing balance, the top-ups, and
 * whether the month is fully synced. statement.ts renders it.
 */
import type { Db } from "../db/client";
import { dayStart, nextDay } from "../core/time";
import {
  coverageOf,
  openingAndClosing,
  summaryOf,
  topupsIn,
  type LedgerCoverage,
  type Reader,
  type UsageSummary,
} from "../ledger/analytics";
import { chargeCheck } from "../ledger/check-view";
import type { ChargeCheckReport } from "../ledger/check-schemas";

export type Part = {
  reader: Reader;
  coverage: LedgerCoverage;
  days: UsageSummary;
  models: UsageSummary;
  tokens: UsageSummary;
  opening: { at: number; quota: number } | null;
  closing: { at: number; quota: number } | null;
  topups: Array<{ at: number; quota: number; content: string }>;
  /** 核对 of the month: the charges against their ratios and the site's list, by model. */
  check: ChargeCheckReport;
  complete: boolean;
};

export async function partOf(db: Db, reader: Reader, month: string, tz: string, now: number): Promise<Part> {
  const first = `${month}-01`;
  const [y, m] = month.split("-").map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).toISOString().slice(0, 10);
  const start = dayStart(tz, first) / 1000;
  const end = dayStart(tz, nextDay(last)) / 1000;
  const q = { from: first, to: last, tz };
  const [days, models, tokens, [coverage], balances, topups, check] = await Promise.all([
    summaryOf(db, [reader], { ...q, groupBy: "day" }),
    summaryOf(db, [reader], { ...q, groupBy: "model" }),
    summaryOf(db, [reader], { ...q, groupBy: "token" }),
    coverageOf(db, [reader]),
    openingAndClosing(db, reader, start, end),
    topupsIn(db, reader, start, end, 200),
    chargeCheck(db, [reader], q),
  ]);
  const state = coverage as LedgerCoverage;
  const oldest = state.oldest ? Date.parse(state.oldest) / 1000 : null;
  const newest = state.newest ? Date.parse(state.newest) / 1000 : null;
  const needUntil = Math.min(end, Math.floor(now / 1000));
  return {
    reader,
    coverage: state,
    days,
    models,
    tokens,
    opening: balances.opening,
    closing: balances.closing,
    topups,
    check,
    complete: oldest !== null && newest !== null && oldest <= start && newest >= needUntil - 3600,
  };
}
