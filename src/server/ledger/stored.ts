/**
 * What the ledger answers in a site's stead (design.md 18, 19). An account's summary as its last
 * sync left it: the balance the sync noted and today's spend from the ledger, with the sync's time
 * as `fetchedAt`; a workspace's 全部账户 shows these while they are fresh (the job runner keeps them
 * within one interval), so a page of 200 accounts asks no site at all, and 刷新 reads them live.
 * And a page of the usage log from the ledger's entries, for when the site cannot be read.
 */
import type { Db } from "../db/client";
import { LOG_TYPES, usdOf, selfInfo, type LogItem, type LogQuery, type LogType } from "../gateway/reads";
import type { LiveSession } from "../session/store";
import type { LogsPage, Summary } from "../site-data/schemas";
import { siteRegistry } from "../sites/registry";
import { dayIn } from "../core/time";
import { readersOf, summaryOf } from "./analytics";

/**
 * The summary from the ledger when the account's last complete sync is at most `maxAgeMs` old
 * (and the site has been probed, so its money settings are known); null otherwise.
 */
export async function storedSummary(
  db: Db,
  session: LiveSession,
  tz: string,
  maxAgeMs: number,
  now = Date.now(),
): Promise<Summary | null> {
  if (maxAgeMs <= 0 || session.site === null) return null;
  const owner = { siteId: session.siteId, siteUserId: BigInt(session.siteUserId) };
  const [state, site] = await Promise.all([
    db.ledgerSync.findUnique({
      where: { siteId_siteUserId: owner },
      select: { syncedAt: true },
    }),
    siteRegistry(db).profiled(session.siteId),
  ]);
  const syncedAt = state?.syncedAt?.getTime() ?? 0;
  if (!site || site.probedAt === null || site.family === "unknown" || now - syncedAt > maxAgeMs) return null;
  // The balance noted by the sync that completed (a sync notes it first, then reads the log).
  const snapshot = await db.balanceSnapshot.findFirst({
    where: { ...owner, at: { lte: Math.floor(syncedAt / 1000) } },
    orderBy: { at: "desc" },
    select: { at: true, quota: true, usedQuota: true, requestCount: true },
  });
  if (!snapshot || syncedAt - snapshot.at * 1000 > maxAgeMs) return null;
  const [reader] = await readersOf(db, [session]);
  if (!reader) return null;
  const today = dayIn(tz, now);
  const spent = await summaryOf(db, [reader], { from: today, to: today, tz, groupBy: "day" });
  const { money } = site;
  const quota = Number(snapshot.quota);
  const used = Number(snapshot.usedQuota);
  const todayQuota = spent.totals.quota;
  return {
    site: { id: site.id, name: site.name, url: site.url, family: site.family },
    user: selfInfo(JSON.parse(session.userInfo) as Record<string, unknown>).user,
    money,
    balance: { quota, usd: usdOf(quota, money) },
    used: { quota: used, usd: usdOf(used, money) },
    requestCount: Number(snapshot.requestCount),
    today: { quota: todayQuota, usd: usdOf(todayQuota, money) },
    todayRequests: spent.totals.requests,
    fetchedAt: new Date(snapshot.at * 1000).toISOString(),
  };
}

/**
 * A page of the account's usage log from the ledger's entries, newest first, with the query's
 * filters as the site applies them (type, exact model and token name, the time range); null when
 * the ledger holds nothing of the account yet. `fetchedAt` is its last completed sync.
 */
export async function storedLogs(db: Db, session: LiveSession, q: LogQuery): Promise<LogsPage | null> {
  const owner = { siteId: session.siteId, siteUserId: BigInt(session.siteUserId) };
  const state = await db.ledgerSync.findUnique({
    where: { siteId_siteUserId: owner },
    select: { syncedAt: true, newest: true },
  });
  if (!state?.syncedAt) return null;
  const [reader] = await readersOf(db, [session]);
  if (!reader) return null;
  const where = {
    ...owner,
    ...(q.type ? { type: q.type } : {}),
    ...(q.model ? { model: q.model } : {}),
    ...(q.token ? { tokenName: q.token } : {}),
    ...(q.from !== undefined || q.to !== undefined
      ? { at: { ...(q.from !== undefined ? { gte: q.from } : {}), ...(q.to !== undefined ? { lte: q.to } : {}) } }
      : {}),
  };
  const [total, rows] = await Promise.all([
    db.ledgerEntry.count({ where }),
    db.ledgerEntry.findMany({
      where,
      orderBy: [{ at: "desc" }, { id: "desc" }],
      skip: (q.page - 1) * q.pageSize,
      take: q.pageSize,
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
      },
    }),
  ]);
  const known = new Set<string>(LOG_TYPES);
  const items = rows.map((r): LogItem => ({
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
  }));
  return {
    page: q.page,
    pageSize: q.pageSize,
    total,
    hasMore: q.page * q.pageSize < total,
    fetchedAt: state.syncedAt.toISOString(),
    items,
  };
}
