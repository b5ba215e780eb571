/**
 * Digests (docs/design.md 21): a workspace's daily, weekly or monthly summary, sent at a local time the
 * person picks (in the workspace's time zone) to the channels they choose. Each period is sent
 * once: the digest's `last_period` is claimed by a conditional update in the same transaction as
 * its outbox rows, so whichever instance builds it, it is delivered once, by the alert outbox with
 * its retries. The monthly one carries the month's statement: attached to email, a one-time link
 * (statement-links.ts) for the rest.
 */
import type { Db } from "../db/client";
import { env } from "../core/env";
import { addDays, dayIn, dayStart, offsetAt } from "../core/time";
import { AlertRefused } from "./channels";
import {
  digestFigures,
  digestMarkdown,
  digestText,
  digestTitle,
  STATEMENT_LINK_MARK,
  type Cadence,
  type DigestPayload,
  type Period,
} from "./digest-report";
import { alertRules } from "./rules";

export const CADENCES = ["daily", "weekly", "monthly"] as const satisfies readonly Cadence[];

export type DigestView = {
  id: number;
  cadence: Cadence;
  /** Local time of day, "HH:MM". */
  time: string;
  /** Weekly: 1 = Monday … 7 = Sunday; null otherwise. */
  weekday: number | null;
  channels: number[];
  lastPeriod: string | null;
  lastSentAt: string | null;
};

const select = {
  id: true,
  workspaceId: true,
  cadence: true,
  minute: true,
  weekday: true,
  channels: true,
  origin: true,
  lastPeriod: true,
  lastSentAt: true,
  createdAt: true,
} as const;

type DigestRow = {
  id: number;
  workspaceId: number;
  cadence: string;
  minute: number;
  weekday: number | null;
  channels: string;
  origin: string;
  lastPeriod: string | null;
  lastSentAt: Date | null;
  createdAt: Date;
};

const pad = (n: number) => String(n).padStart(2, "0");

const digestView = (r: DigestRow): DigestView => ({
  id: r.id,
  cadence: r.cadence as Cadence,
  time: `${pad(Math.floor(r.minute / 60))}:${pad(r.minute % 60)}`,
  weekday: r.weekday,
  channels: JSON.parse(r.channels) as number[],
  lastPeriod: r.lastPeriod,
  lastSentAt: r.lastSentAt?.toISOString() ?? null,
});

/** "HH:MM" as minutes of the day, in words when it is not a time. */
function minuteOf(time: string): number {
  const m = /^(\d{1,2}):(\d{2})$/.exec(time.trim());
  const minute = m ? Number(m[1]) * 60 + Number(m[2]) : NaN;
  if (!m || Number(m[1]) > 23 || Number(m[2]) > 59) throw new AlertRefused("发送时间须是 00:00 到 23:59 之间的时刻");
  return minute;
}

/** ISO weekday (1 = Monday) of a calendar day. */
const weekdayOf = (day: string) => {
  const d = new Date(`${day}T00:00:00Z`).getUTCDay();
  return d === 0 ? 7 : d;
};

/**
 * The latest scheduled moment at or before `now` and the period it covers: daily, the day before;
 * weekly, the 7 days before; monthly (on the 1st), the month before.
 */
export function lastOccurrence(
  d: { cadence: Cadence; minute: number; weekday: number | null },
  tz: string,
  now: Date,
): { at: Date; period: Period; key: string } {
  const today = dayIn(tz, now.getTime());
  const local = new Date(now.getTime() + offsetAt(tz, now.getTime()));
  const minuteNow = local.getUTCHours() * 60 + local.getUTCMinutes();
  const reached = minuteNow >= d.minute;
  let day: string;
  if (d.cadence === "daily") day = reached ? today : addDays(today, -1);
  else if (d.cadence === "weekly") {
    day = today;
    for (let back = 0; back <= 7; back++) {
      const candidate = addDays(today, -back);
      if (weekdayOf(candidate) === d.weekday && (back > 0 || reached)) {
        day = candidate;
        break;
      }
    }
  } else {
    const first = `${today.slice(0, 8)}01`;
    day = today !== first || reached ? first : `${addDays(first, -1).slice(0, 8)}01`;
  }
  const at = new Date(dayStart(tz, day) + d.minute * 60_000);
  const yesterday = addDays(day, -1);
  const period: Period =
    d.cadence === "daily"
      ? { from: yesterday, to: yesterday }
      : d.cadence === "weekly"
        ? { from: addDays(day, -7), to: yesterday }
        : { from: `${yesterday.slice(0, 8)}01`, to: yesterday };
  const key = d.cadence === "monthly" ? period.from.slice(0, 7) : `${period.from}/${period.to}`;
  return { at, period, key };
}

export type DigestInput = {
  cadence: Cadence;
  time: string;
  weekday?: number | null | undefined;
  channels: number[];
};

export function alertDigests(db: Db) {
  return {
    async list(workspaceId: number): Promise<DigestView[]> {
      const rows = await db.alertDigest.findMany({ where: { workspaceId }, orderBy: { id: "asc" }, select });
      return rows
        .sort((a, b) => CADENCES.indexOf(a.cadence as Cadence) - CADENCES.indexOf(b.cadence as Cadence))
        .map(digestView);
    },

    /**
     * Sets the workspace's digest of a cadence (one each); `origin` is where its statement links
     * point. The channels must be the workspace's own (the caller checked them).
     */
    async set(workspaceId: number, input: DigestInput, origin: string, now = new Date()): Promise<DigestView> {
      if (!CADENCES.includes(input.cadence)) throw new AlertRefused("不认识的摘要周期");
      const minute = minuteOf(input.time);
      let weekday: number | null = null;
      if (input.cadence === "weekly") {
        weekday = input.weekday ?? 1;
        if (!Number.isInteger(weekday) || weekday < 1 || weekday > 7)
          throw new AlertRefused("星期须是 1（周一）到 7（周日）");
      }
      if (input.channels.length === 0) throw new AlertRefused("请至少选择一个通知渠道");
      const channels = JSON.stringify([...new Set(input.channels)]);
      // The period already past when it is set is not sent late: the next one is the first.
      const { timeZone } = await alertRules(db).settings(workspaceId, now);
      const lastPeriod = lastOccurrence({ cadence: input.cadence, minute, weekday }, timeZone, now).key;
      const data = { minute, weekday, channels, origin: env().PUBLIC_URL ?? origin };
      const row = await db.alertDigest.upsert({
        where: { workspaceId_cadence: { workspaceId, cadence: input.cadence } },
        create: { workspaceId, cadence: input.cadence, ...data, lastPeriod, createdAt: now },
        update: data,
        select,
      });
      return digestView(row);
    },

    async remove(workspaceId: number, id: number): Promise<boolean> {
      const { count } = await db.alertDigest.deleteMany({ where: { id, workspaceId } });
      return count > 0;
    },

    /** A channel removed from the workspace leaves its digests. */
    async dropChannel(workspaceId: number, channelId: number): Promise<void> {
      const rows = await db.alertDigest.findMany({ where: { workspaceId }, select });
      for (const r of rows) {
        const channels = (JSON.parse(r.channels) as number[]).filter((c) => c !== channelId);
        if (channels.length === 0) await db.alertDigest.deleteMany({ where: { id: r.id } });
        else await db.alertDigest.updateMany({ where: { id: r.id }, data: { channels: JSON.stringify(channels) } });
      }
    },
  };
}

/** Channel types that take a file: the statement goes as an attachment, not a link. */
const ATTACHING = new Set(["email"]);

/**
 * Builds and queues one digest's period now, whatever its schedule (the due check and the 发送一次
 * button both come here). Returns false when another instance claimed the period first.
 */
async function queueDigest(
  db: Db,
  row: DigestRow,
  due: { period: Period; key: string },
  timeZone: string,
  now: Date,
  opts: { claim: boolean },
): Promise<boolean> {
  const cadence = row.cadence as Cadence;
  const figures = await digestFigures(db, row.workspaceId, { cadence, period: due.period, timeZone });
  const channelIds = JSON.parse(row.channels) as number[];
  const channels = await db.alertChannel.findMany({
    where: { id: { in: channelIds }, workspaceId: row.workspaceId },
    select: { id: true, type: true },
  });
  const payloads = channels.map((c) => {
    let withStatement = figures;
    let statement: DigestPayload["statement"];
    let link: DigestPayload["link"];
    if (cadence === "monthly") {
      const month = due.period.from.slice(0, 7);
      if (ATTACHING.has(c.type)) {
        statement = { workspaceId: row.workspaceId, month, timeZone };
        withStatement = { ...figures, statement: { month, url: null, attached: true } };
      } else {
        link = { workspaceId: row.workspaceId, month, timeZone, origin: row.origin };
        withStatement = { ...figures, statement: { month, url: STATEMENT_LINK_MARK, attached: false } };
      }
    }
    const payload: DigestPayload = {
      event: "digest",
      at: now.toISOString(),
      digest: {
        title: digestTitle(withStatement),
        text: digestText(withStatement),
        markdown: digestMarkdown(withStatement),
        figures: withStatement,
      },
      ...(statement ? { statement } : {}),
      ...(link ? { link } : {}),
    };
    return { channelId: c.id, payload: JSON.stringify(payload) };
  });
  return db.$transaction(async (tx) => {
    if (opts.claim) {
      const { count } = await tx.alertDigest.updateMany({
        where: { id: row.id, OR: [{ lastPeriod: null }, { lastPeriod: { not: due.key } }] },
        data: { lastPeriod: due.key, lastSentAt: now },
      });
      if (count === 0) return false;
    } else {
      await tx.alertDigest.updateMany({ where: { id: row.id }, data: { lastSentAt: now } });
    }
    for (const p of payloads) {
      await tx.alertDelivery.create({
        data: {
          digestId: row.id,
          channelId: p.channelId,
          event: "digest",
          payload: p.payload,
          status: "pending",
          nextAt: now,
          createdAt: now,
        },
        select: { id: true },
      });
    }
    return true;
  });
}

/** Queues every digest whose moment has come and whose period is not sent yet; returns how many. */
export async function queueDueDigests(db: Db, now = new Date()): Promise<number> {
  const zones = new Map<number, string>();
  let queued = 0;
  // A batch at a time, in id order: what a pass holds does not grow with the deployment.
  for (let after = 0; ;) {
    const rows = await db.alertDigest.findMany({
      where: { id: { gt: after } },
      orderBy: { id: "asc" },
      take: 500,
      select,
    });
    for (const row of rows) if (await queueIfDue(db, row, zones, now)) queued++;
    if (rows.length < 500) break;
    after = rows[rows.length - 1]!.id;
    zones.clear();
  }
  return queued;
}

/** Queues the digest when its moment has come and its period is not sent yet. */
async function queueIfDue(db: Db, row: DigestRow, zones: Map<number, string>, now: Date): Promise<boolean> {
  let tz = zones.get(row.workspaceId);
  if (!tz) {
    tz = (await alertRules(db).settings(row.workspaceId, now)).timeZone;
    zones.set(row.workspaceId, tz);
  }
  const due = lastOccurrence({ cadence: row.cadence as Cadence, minute: row.minute, weekday: row.weekday }, tz, now);
  if (row.lastPeriod === due.key) return false;
  return queueDigest(db, row, due, tz, now, { claim: true });
}

/**
 * 立即发送: the digest of the last whole period before today in the workspace's zone (daily its
 * yesterday, weekly the 7 days before today, monthly the month before this one), now, without
 * marking it sent (a preview). Its moment of the day does not matter: sent at 02:13, a daily
 * digest covers yesterday, not the day before.
 */
export async function sendDigestNow(db: Db, workspaceId: number, id: number, now = new Date()): Promise<boolean> {
  const row = await db.alertDigest.findFirst({ where: { id, workspaceId }, select });
  if (!row) return false;
  const { timeZone } = await alertRules(db).settings(workspaceId, now);
  const today = weekdayOf(dayIn(timeZone, now.getTime()));
  const due = lastOccurrence({ cadence: row.cadence as Cadence, minute: 0, weekday: today }, timeZone, now);
  return queueDigest(db, row, due, timeZone, now, { claim: false });
}
