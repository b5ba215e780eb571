/**
 * The usage log as the ledger answers it (docs/design.md 19): a page of an account's entries, newest
 * first, its model and token filters matched as parts of the names, whatever their case (the sites
 * match them exactly), and the totals of everything the filter matches. What the site logged after
 * the last sync is read live by the caller and put before the ledger's entries.
 */
import type { Db } from "../db/client";
import { driverOf } from "../db/driver";
import { checkCharge } from "../gateway/charge-check";
import { LOG_TYPES, usdOf, type LogDetail, type LogItem, type LogQuery, type LogType } from "../gateway/reads";
import type { LiveSession } from "../session/store";
import type { LogsPage, LogTotals } from "../site-data/schemas";

type SiteLogsPage = Pick<LogsPage, "page" | "pageSize" | "total" | "hasMore" | "fetchedAt" | "items">;
import { readersOf } from "./analytics";
import { ownerWhere } from "./store";

/** The seconds the account's ledger holds (inclusive) and when it was last synced whole; null before a first sync. */
export type LogCoverage = { oldest: number; newest: number; syncedAt: Date };

export async function logCoverage(db: Db, session: LiveSession): Promise<LogCoverage | null> {
  const state = await db.ledgerSync.findUnique({
    where: { siteId_siteUserId: { siteId: session.siteId, siteUserId: BigInt(session.siteUserId) } },
    select: { oldest: true, newest: true, syncedAt: true },
  });
  if (!state?.syncedAt || state.oldest === null || state.newest === null) return null;
  // A reader that no longer holds the account sees it up to then (docs/design.md 24).
  const newest = session.heldUntil === undefined ? state.newest : Math.min(state.newest, session.heldUntil - 1);
  return { oldest: state.oldest, newest, syncedAt: state.syncedAt };
}

/** Whether the ledger holds every entry of the query's range up to its last sync. */
export const covers = (c: LogCoverage | null, q: Pick<LogQuery, "from">): c is LogCoverage =>
  c !== null && (q.from === undefined || q.from >= c.oldest);

const contains = (name: string, part: string | undefined) =>
  part === undefined || name.toLowerCase().includes(part.toLowerCase());

/** The live entries a filter keeps, as the ledger matches them. */
export const matching = (items: LogItem[], q: Pick<LogQuery, "model" | "token">) =>
  items.filter((i) => contains(i.model, q.model) && contains(i.tokenName, q.token));

const zero = (): Omit<LogTotals, "usd"> => ({
  entries: 0,
  requests: 0,
  quota: 0,
  promptTokens: 0,
  completionTokens: 0,
});

function logTotals(items: LogItem[]): Omit<LogTotals, "usd"> {
  const t = zero();
  for (const i of items) {
    t.entries += 1;
    if (i.type !== "consume") continue;
    t.requests += 1;
    t.quota += i.quota;
    t.promptTokens += i.promptTokens;
    t.completionTokens += i.completionTokens;
  }
  return t;
}

/** An entry with its charge recomputed (docs/design.md 27). */
const withCheck = (item: Omit<LogItem, "check">, quotaPerUnit: number): LogItem => ({
  ...item,
  check: checkCharge(item, quotaPerUnit),
});

/** An entry's kept detail (a JSON object's text, "" for none) as an object; {} for anything else. */
export function detailOf(text: string): LogDetail {
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as LogDetail) : {};
  } catch {
    return {};
  }
}

/**
 * A page of the account's log from the ledger, `before` (live entries newer than the ledger,
 * newest first, already filtered) leading it; `through` the last second read from the ledger.
 * Null when the ledger holds nothing of the account yet.
 */
export async function ledgerLogs(
  db: Db,
  session: LiveSession,
  q: LogQuery,
  opts: { before?: LogItem[]; through?: number; fetchedAt: string },
): Promise<(SiteLogsPage & { totals: LogTotals }) | null> {
  const [reader] = await readersOf(db, [session]);
  if (!reader) return null;
  const insensitive = driverOf(db).kind === "postgres" ? { mode: "insensitive" as const } : {};
  const to = opts.through === undefined ? q.to : Math.min(q.to ?? opts.through, opts.through);
  const where = {
    ...ownerWhere(reader, {
      ...(q.from !== undefined ? { gte: q.from } : {}),
      ...(to !== undefined ? { lte: to } : {}),
    }),
    ...(q.type ? { type: q.type } : {}),
    // SQLite's LIKE ignores the case of Latin letters by itself; PostgreSQL is told to.
    ...(q.model ? { model: { contains: q.model, ...insensitive } } : {}),
    ...(q.token ? { tokenName: { contains: q.token, ...insensitive } } : {}),
  };
  const before = opts.before ?? [];
  const start = (q.page - 1) * q.pageSize;
  const lead = before.slice(start, start + q.pageSize);
  const [groups, rows] = await Promise.all([
    db.ledgerEntry.groupBy({
      by: ["type"],
      where,
      _count: { _all: true },
      _sum: { quota: true, promptTokens: true, completionTokens: true },
    }),
    lead.length === q.pageSize
      ? Promise.resolve([])
      : db.ledgerEntry.findMany({
          where,
          orderBy: [{ at: "desc" }, { id: "desc" }],
          skip: Math.max(0, start - before.length),
          take: q.pageSize - lead.length,
          select: {
            at: true,
            type: true,
            model: true,
            tokenName: true,
            quota: true,
            promptTokens: true,
            completionTokens: true,
            durationMs: true,
            stream: true,
            content: true,
            detail: true,
          },
        }),
  ]);
  const totals = logTotals(before);
  for (const g of groups) {
    totals.entries += g._count._all;
    if (g.type !== "consume") continue;
    totals.requests += g._count._all;
    totals.quota += Number(g._sum.quota ?? 0);
    totals.promptTokens += Number(g._sum.promptTokens ?? 0);
    totals.completionTokens += Number(g._sum.completionTokens ?? 0);
  }
  const known = new Set<string>(LOG_TYPES);
  const stored = rows.map((r): LogItem =>
    withCheck(
      {
        createdAt: new Date(r.at * 1000).toISOString(),
        type: (known.has(r.type) ? r.type : "other") as LogType,
        model: r.model,
        tokenName: r.tokenName,
        quota: Number(r.quota),
        usd: usdOf(Number(r.quota), reader.money),
        promptTokens: Number(r.promptTokens),
        completionTokens: Number(r.completionTokens),
        durationMs: r.durationMs,
        stream: r.stream,
        content: r.content,
        detail: detailOf(r.detail),
      },
      reader.quotaPerUnit,
    ),
  );
  return {
    page: q.page,
    pageSize: q.pageSize,
    total: totals.entries,
    hasMore: q.page * q.pageSize < totals.entries,
    fetchedAt: opts.fetchedAt,
    items: [...lead, ...stored],
    totals: { ...totals, usd: usdOf(totals.quota, reader.money) },
  };
}

/** The model and token names the ledger knows for the account, most used first (at most 200 each). */
export async function logNames(db: Db, session: LiveSession): Promise<{ models: string[]; tokens: string[] }> {
  const owner = ownerWhere(
    { siteId: session.siteId, siteUserId: session.siteUserId, until: session.heldUntil },
    {},
    "hour",
  );
  const [models, tokens] = await Promise.all([
    db.ledgerHour.groupBy({
      by: ["model"],
      where: { ...owner, model: { not: "" } },
      _sum: { requests: true },
      orderBy: { _sum: { requests: "desc" } },
      take: 200,
    }),
    db.ledgerHour.groupBy({
      by: ["tokenName"],
      where: { ...owner, tokenName: { not: "" } },
      _sum: { requests: true },
      orderBy: { _sum: { requests: "desc" } },
      take: 200,
    }),
  ]);
  return { models: models.map((m) => m.model), tokens: tokens.map((t) => t.tokenName) };
}
