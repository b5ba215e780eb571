import { TRPCError } from "@trpc/server";
import { MSG, failure } from "../../core/messages";
import { logEvent } from "../../core/log";
import { readersOf, type Reader } from "../../ledger/analytics";
import { csvFileName, csvRowCount, usageCsv, type CsvQuery } from "../../exports/csv";
import { exportCsvInput, parseParams, statementInput, usageRange } from "../schemas/accounts";
import { StatementBusy, statementFileName, statementPdf } from "../../exports/statement";
import { dayIn, serverTimeZone } from "../../core/time";
import { sessionStore } from "../../session/store";
import type { Context } from "../context";
import { anyInput, authedProcedure, router } from "../trpc";
import { sessionsFor } from "../site-deps";

/** A file to download: REST writes it as the response body (the tRPC endpoint cannot carry it). */
export type FileData = { filename: string; contentType: string; body: ReadableStream<Uint8Array> | Uint8Array };

function csvQueryOf(raw: unknown) {
  const params = parseParams(exportCsvInput, raw);
  if (!params.ok) return params;
  const p = params.value;
  const tz = p.tz ?? serverTimeZone();
  const query: CsvQuery = { ...usageRange(p, dayIn(tz, Date.now())), tz, type: p.type, model: p.model, token: p.token };
  return { ok: true as const, value: { query, accounts: p.accounts } };
}

/** Who an export is for, for the log line (never a token). */
const whoOf = (ctx: Context & { session: { siteId: number; siteUserId: number } }) => ({
  site: ctx.session.siteId,
  user: ctx.session.siteUserId,
});

/** Exports of the usage ledger (design.md 14): REST GET /api/export/usage.csv and /statement.pdf. */
export const exportRouter = router({
  /** How many rows a CSV export with these filters holds (the dashboard shows it before the download). */
  count: authedProcedure.input(anyInput).query(async ({ ctx, input }) => {
    const parsed = csvQueryOf(input);
    if (!parsed.ok) return failure(parsed.message);
    const { query, accounts } = parsed.value;
    const readers = await readersOf(ctx.db, await sessionsFor(ctx, accounts));
    const rows = await csvRowCount(ctx.db, readers, query);
    return { success: true as const, data: { rows, from: query.from, to: query.to, filename: csvFileName(query) } };
  }),

  /** The ledger's entries as CSV, streamed. */
  usageCsv: authedProcedure.input(anyInput).query(async ({ ctx, input }) => {
    const parsed = csvQueryOf(input);
    if (!parsed.ok) return failure(parsed.message);
    const { query, accounts } = parsed.value;
    const readers = await readersOf(ctx.db, await sessionsFor(ctx, accounts));
    const started = Date.now();
    const sessions = sessionStore(ctx.db);
    // The requester's session, and the one of the account being read (the same for one account).
    const live = async (reader: Reader) =>
      (await sessions.isLive(ctx.session.id)) &&
      (reader.sessionId === ctx.session.id || (await sessions.isLive(reader.sessionId)));
    const body = usageCsv(ctx.db, readers, query, live, (rows, complete) =>
      logEvent("export.csv", {
        ...whoOf(ctx),
        accounts: readers.length,
        from: query.from,
        to: query.to,
        rows,
        complete,
        ms: Date.now() - started,
      }),
    );
    const data: FileData = { filename: csvFileName(query), contentType: "text/csv; charset=utf-8", body };
    return { success: true as const, data };
  }),

  /** A month's statement as PDF, one part per account (and a summary page when several). */
  statement: authedProcedure.input(anyInput).query(async ({ ctx, input }) => {
    const params = parseParams(statementInput, input);
    if (!params.ok) return failure(params.message);
    const p = params.value;
    const tz = p.tz ?? serverTimeZone();
    const readers = await readersOf(ctx.db, await sessionsFor(ctx, p.accounts));
    const started = Date.now();
    let pdf: Awaited<ReturnType<typeof statementPdf>>;
    try {
      pdf = await statementPdf(ctx.db, readers, { month: p.month, tz });
    } catch (error) {
      if (!(error instanceof StatementBusy)) throw error;
      ctx.resHeaders.set("Retry-After", String(error.retryAfterSeconds));
      throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: MSG.statementBusy });
    }
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
});
