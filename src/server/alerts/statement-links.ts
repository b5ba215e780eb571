/**
 * One-time links to a month's statement (docs/design.md 21), sent by the monthly digest to channels that
 * take no attachment. The link's secret is 32 random bytes; only its SHA-256 is kept. Opening the
 * link shows a page (a chat's link preview may open it too); the download itself works once, within
 * 7 days.
 */
import { createHash, randomBytes } from "node:crypto";
import type { Db } from "../db/client";
import { statementFileName, statementPdf } from "../exports/statement";
import { workspaceReaders } from "./digest-report";

const LINK_DAYS = 7;

const idOf = (secret: string) => createHash("sha256").update(secret).digest("hex");

/** A link's secret is base64url of 32 bytes; anything else is no link. */
const wellFormed = (secret: string) => /^[A-Za-z0-9_-]{43}$/.test(secret);

export async function createStatementLink(
  db: Db,
  workspaceId: number,
  q: { month: string; timeZone: string; origin: string },
  now = new Date(),
): Promise<string> {
  const secret = randomBytes(32).toString("base64url");
  await db.statementLink.create({
    data: {
      id: idOf(secret),
      workspaceId,
      month: q.month,
      timeZone: q.timeZone,
      expiresAt: new Date(now.getTime() + LINK_DAYS * 86_400_000),
      createdAt: now,
    },
    select: { id: true },
  });
  return `${q.origin.replace(/\/+$/, "")}/statement/${secret}`;
}

export type LinkState =
  | { state: "ready"; month: string; expiresAt: Date }
  | { state: "used"; month: string }
  | { state: "expired"; month: string }
  | { state: "unknown" };

/** What a link is now, without using it (the page shows it). */
export async function statementLinkState(db: Db, secret: string, now = new Date()): Promise<LinkState> {
  if (!wellFormed(secret)) return { state: "unknown" };
  const row = await db.statementLink.findUnique({
    where: { id: idOf(secret) },
    select: { month: true, expiresAt: true, usedAt: true },
  });
  if (!row) return { state: "unknown" };
  if (row.usedAt) return { state: "used", month: row.month };
  if (row.expiresAt <= now) return { state: "expired", month: row.month };
  return { state: "ready", month: row.month, expiresAt: row.expiresAt };
}

const LINK_MSG = {
  unknown: "链接无效",
  used: "这个链接已经用过：对账单只能通过链接下载一次，请在控制台的「导出」中下载",
  expired: `链接已过期（${LINK_DAYS} 天内有效），请在控制台的「导出」中下载`,
} as const;

/**
 * Uses the link: marks it used (one caller wins the conditional update) and renders the statement
 * of the workspace's accounts. Answers the reason in words when it cannot.
 */
export async function useStatementLink(
  db: Db,
  secret: string,
  now = new Date(),
): Promise<{ filename: string; body: ReadableStream<Uint8Array> } | { refused: string }> {
  const state = await statementLinkState(db, secret, now);
  if (state.state !== "ready") return { refused: LINK_MSG[state.state] };
  const { count } = await db.statementLink.updateMany({
    where: { id: idOf(secret), usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  if (count === 0) return { refused: LINK_MSG.used };
  const row = await db.statementLink.findUnique({
    where: { id: idOf(secret) },
    select: { workspaceId: true, month: true, timeZone: true },
  });
  if (!row) return { refused: LINK_MSG.unknown };
  return workspaceStatement(db, row.workspaceId, row.month, row.timeZone, now);
}

/** A month's statement of a workspace's accounts as a PDF stream. */
export async function workspaceStatement(
  db: Db,
  workspaceId: number,
  month: string,
  timeZone: string,
  now = new Date(),
) {
  const { readers } = await workspaceReaders(db, workspaceId);
  const pdf = await statementPdf(db, [...readers.values()], { month, tz: timeZone }, now.getTime());
  return { filename: statementFileName(month), body: pdf.body };
}

/** Links past their end are kept a while (the page says 已过期), then removed. */
export async function pruneStatementLinks(db: Db, now = new Date()): Promise<number> {
  const { count } = await db.statementLink.deleteMany({
    where: { expiresAt: { lt: new Date(now.getTime() - 30 * 86_400_000) } },
  });
  return count;
}
