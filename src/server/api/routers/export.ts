import { logEvent } from "../../core/log";
import { readersOf, type Reader } from "../../ledger/analytics";
import { csvFileName, csvRowCount, usageCsv, type CsvQuery } from "../../exports/csv";
import {
  exportCountSuccess,
  exportCsvInput,
  fileSuccess,
  accountsRangeInput,
  statementInput,
  type FileData,
} from "../schemas/accounts";
import { statementFileName, statementPdf } from "../../exports/statement";
import { reconciliationCsv, reconciliationFileName } from "../../exports/reconciliation-csv";
import { checkCsv, checkFileName } from "../../exports/check-csv";
import type { Context } from "../context";
import { authedProcedure, router } from "../trpc";
import { sessionsFor, stillAllowed } from "../site-deps";
import { rest } from "../rest-routes";

/** Who an export is for, for the log line (never a token). */
const whoOf = (ctx: Context & { session: { siteId: number; siteUserId: number } }) => ({
  site: ctx.session.siteId,
  user: ctx.session.siteUserId,
});

/** The log line of a streamed export once it ends: how many rows went out, read to the end or not. */
function streamEnded(
  ctx: Parameters<typeof whoOf>[0],
  event: string,
  readers: Reader[],
  q: { from: string; to: string },
): (rows: number, complete: boolean) => void {
  const started = Date.now();
  return (rows, complete) =>
    logEvent(event, {
      ...whoOf(ctx),
      accounts: readers.length,
      from: q.from,
      to: q.to,
      rows,
      complete,
      ms: Date.now() - started,
    });
}

/** Exports of the usage ledger (docs/design.md 14): REST GET /api/export/usage.csv and /statement.pdf. */
export const exportRouter = router({
  /** How many rows a CSV export with these filters holds (the dashboard shows it before the download). */
  count: authedProcedure
    .meta(rest("GET", "/api/export/count"))
    .input(exportCsvInput)
    .output(exportCountSuccess)
    .query(async ({ ctx, input }) => {
      const query: CsvQuery = input;
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, input.accounts));
      const rows = await csvRowCount(ctx.db, readers, query);
      return { success: true as const, data: { rows, from: query.from, to: query.to, filename: csvFileName(query) } };
    }),

  /** The ledger's entries as CSV, streamed. */
  usageCsv: authedProcedure
    .meta(rest("GET", "/api/export/usage.csv", { answer: "file" }))
    .input(exportCsvInput)
    .output(fileSuccess)
    .query(async ({ ctx, input }) => {
      const query: CsvQuery = input;
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, input.accounts));
      // The requester's session, and the one of the account being read (the same for one account).
      const allowed = stillAllowed(ctx);
      const live = (reader: Reader) => allowed(reader.sessionId);
      const body = usageCsv(ctx.db, readers, query, live, streamEnded(ctx, "export.csv", readers, query));
      const data: FileData = { filename: csvFileName(query), contentType: "text/csv; charset=utf-8", body };
      return { success: true as const, data };
    }),

  /** A month's statement as PDF, one part per account (and a summary page when several). */
  statement: authedProcedure
    .meta(rest("GET", "/api/export/statement.pdf", { answer: "file" }))
    .input(statementInput)
    .output(fileSuccess)
    .query(async ({ ctx, input: p }) => {
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, p.accounts));
      const started = Date.now();
      const pdf = await statementPdf(ctx.db, readers, { month: p.month, tz: p.tz });
      logEvent("export.statement", {
        ...whoOf(ctx),
        accounts: readers.length,
        month: p.month,
        rows: pdf.entries,
        ms: Date.now() - started,
      });
      const data: FileData = { filename: statementFileName(p.month), contentType: "application/pdf", body: pdf.body };
      return { success: true as const, data };
    }),

  /** 对账 of the range as its own CSV: each account's days, the balance change against the log. */
  reconciliationCsv: authedProcedure
    .meta(rest("GET", "/api/export/reconciliation.csv", { answer: "file" }))
    .input(accountsRangeInput)
    .output(fileSuccess)
    .query(async ({ ctx, input: q }) => {
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, q.accounts));
      const started = Date.now();
      const file = await reconciliationCsv(ctx.db, readers, q);
      logEvent("export.reconciliation", {
        ...whoOf(ctx),
        accounts: readers.length,
        from: q.from,
        to: q.to,
        rows: file.rows,
        flagged: file.flagged,
        ms: Date.now() - started,
      });
      const data: FileData = {
        filename: reconciliationFileName(q),
        contentType: "text/csv; charset=utf-8",
        body: file.body,
      };
      return { success: true as const, data };
    }),

  /** 核对's flagged entries (charged otherwise than their ratios or the site's list) as CSV. */
  checkCsv: authedProcedure
    .meta(
      rest("GET", "/api/export/charge-check.csv", {
        answer: "file",
        summary: "导出核对不符条目 CSV",
        description:
          "范围内扣费与日志倍率或站点价目表不符的每条消费日志一行（按时间）：时间（tz 时区）、站点、账户、模型、令牌、输入与输出 tokens、" +
          "实际扣费、按日志倍率应扣、按价目表应扣（额度与美元；相符或无法比对时留空）、多扣（美元，负数为少扣）、说明。UTF-8 带 BOM、CRLF 换行。",
      }),
    )
    .input(accountsRangeInput)
    .output(fileSuccess)
    .query(async ({ ctx, input: q }) => {
      const readers = await readersOf(ctx.db, await sessionsFor(ctx, q.accounts));
      const allowed = stillAllowed(ctx);
      const live = (reader: Reader) => allowed(reader.sessionId);
      const body = checkCsv(ctx.db, readers, q, live, streamEnded(ctx, "export.check", readers, q));
      const data: FileData = { filename: checkFileName(q), contentType: "text/csv; charset=utf-8", body };
      return { success: true as const, data };
    }),
});
