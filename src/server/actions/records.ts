/**
 * 操作记录: every write made on an account's site through this service (docs/design.md 20): what, when,
 * from which device, the site's answer in words. Never a key or a code. A workspace's records are
 * its own; records made from a browser session belong to whoever holds that account's session.
 */
import type { Db } from "../db/client";
import { SiteDataError } from "../site-data/calls";
import { csvRecord, neutralize } from "../core/csv";
import type { ActionRecord } from "./schemas";

export type ActionKind = "redeem" | "checkin" | "token" | "proxy";

/** How long records are kept. */
export const RECORD_KEEP_DAYS = 365;

export type Actor = {
  siteId: number;
  siteUserId: number;
  /** The workspace that acted (null: a browser session or Bearer of the account itself). */
  workspaceId: number | null;
  /** "Chrome · Windows", "API", "自动签到". */
  device: string;
};

export async function recordAction(
  db: Db,
  actor: Actor,
  outcome: { kind: ActionKind; ok: boolean; message: string; quota: number | null },
  now = new Date(),
): Promise<void> {
  await db.accountAction.create({
    data: {
      siteId: actor.siteId,
      siteUserId: BigInt(actor.siteUserId),
      workspaceId: actor.workspaceId,
      at: now,
      kind: outcome.kind,
      ok: outcome.ok,
      message: outcome.message.slice(0, 500),
      quota: outcome.quota === null ? null : BigInt(Math.round(outcome.quota)),
      device: actor.device.slice(0, 100),
    },
    select: { id: true },
  });
}

type Record_ = (ok: boolean, message: string, quota: number | null) => Promise<void>;

/** Sends a write; when it fails before the site answers (unreachable, busy, token refused), that is recorded first. */
export async function recordedSend<T>(record: Record_, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof SiteDataError) await record(false, error.message, null);
    throw error;
  }
}

/** The records of an account a viewer may see (a workspace: its own and the browser's; a browser: its own). */
function visibleTo(viewer: Omit<Actor, "device">) {
  return {
    siteId: viewer.siteId,
    siteUserId: BigInt(viewer.siteUserId),
    ...(viewer.workspaceId === null
      ? { workspaceId: null }
      : { OR: [{ workspaceId: viewer.workspaceId }, { workspaceId: null }] }),
  };
}

const KIND_TEXT: Record<string, string> = { redeem: "兑换码", checkin: "签到", token: "令牌", proxy: "代理" };

/** Most records one export holds (a year of an account's writes is far fewer). */
const RECORDS_CSV_MAX = 100_000;

/**
 * The account's 操作记录 as CSV (UTF-8 with a BOM, so spreadsheets read the Chinese): newest first,
 * times in UTC (ISO 8601), the site's words neutralised against formulas.
 */
export async function actionRecordsCsv(db: Db, viewer: Omit<Actor, "device">): Promise<string> {
  const rows = await db.accountAction.findMany({
    where: visibleTo(viewer),
    orderBy: [{ at: "desc" }, { id: "desc" }],
    take: RECORDS_CSV_MAX,
    select: { at: true, kind: true, ok: true, message: true, quota: true, device: true },
  });
  let out = "\uFEFF" + csvRecord(["时间 (UTC)", "类型", "结果", "说明", "额度", "来源"]);
  for (const r of rows) {
    out += csvRecord([
      r.at.toISOString(),
      KIND_TEXT[r.kind] ?? r.kind,
      r.ok ? "成功" : "失败",
      neutralize(r.message),
      r.quota === null ? "" : Number(r.quota),
      neutralize(r.device),
    ]);
  }
  return out;
}

/** A page of an account's records, newest first, as its viewer may see them. */
export async function actionRecords(
  db: Db,
  viewer: Omit<Actor, "device">,
  page: { page: number; pageSize: number },
): Promise<{ total: number; items: ActionRecord[] }> {
  // A workspace sees its own and the account's browser records; a browser never a workspace's.
  const where = visibleTo(viewer);
  const [total, rows] = await Promise.all([
    db.accountAction.count({ where }),
    db.accountAction.findMany({
      where,
      orderBy: [{ at: "desc" }, { id: "desc" }],
      skip: (page.page - 1) * page.pageSize,
      take: page.pageSize,
      select: { at: true, kind: true, ok: true, message: true, quota: true, device: true },
    }),
  ]);
  return {
    total,
    items: rows.map((r) => ({
      at: r.at.toISOString(),
      kind: r.kind as ActionKind,
      ok: r.ok,
      message: r.message,
      quota: r.quota === null ? null : Number(r.quota),
      device: r.device,
    })),
  };
}

/** Records past RECORD_KEEP_DAYS, removed in bounded batches by the hourly retention. */
export async function pruneActionRecords(db: Db, now = Date.now()): Promise<number> {
  const { count } = await db.accountAction.deleteMany({
    where: { at: { lt: new Date(now - RECORD_KEEP_DAYS * 86_400_000) } },
  });
  return count;
}

/**
 * The successful check-ins made through this service on the accounts in [from, to) (Unix
 * seconds), with what each added: income where the site's own log has none (ledger/income.ts).
 */
export async function checkinsOf(
  db: Db,
  owners: Array<{ siteId: number; siteUserId: number }>,
  from: number,
  to: number,
): Promise<Array<{ siteId: number; siteUserId: number; at: number; quota: number }>> {
  if (owners.length === 0) return [];
  const rows = await db.accountAction.findMany({
    where: {
      OR: owners.map((o) => ({ siteId: o.siteId, siteUserId: BigInt(o.siteUserId) })),
      kind: "checkin",
      ok: true,
      quota: { gt: 0 },
      at: { gte: new Date(from * 1000), lt: new Date(to * 1000) },
    },
    select: { siteId: true, siteUserId: true, at: true, quota: true },
  });
  return rows.map((r) => ({
    siteId: r.siteId,
    siteUserId: Number(r.siteUserId),
    at: Math.floor(r.at.getTime() / 1000),
    quota: Number(r.quota ?? 0),
  }));
}
