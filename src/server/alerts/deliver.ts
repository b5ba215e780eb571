/**
 * The alert outbox (docs/design.md 21): due messages are claimed one by one with a conditional update
 * (the instance whose update counts sends it; the others skip), sent, and marked; a failure is
 * tried again after 1, 5, 15, 60 minutes, then every 3 hours, given up after 8 tries. Channels
 * are sent to side by side, each its own queue, so a failing one never delays the others.
 */
import pLimit from "p-limit";
import type { Db } from "../db/client";
import { AlertRefused, sendToChannel } from "./channels";

/** Minutes before each retry; past the last, the delivery has failed (eight attempts in all). */
const BACKOFF_MIN = [1, 5, 15, 60, 180, 180, 180];
const CLAIM_MS = 2 * 60_000;
const PER_RUN = 50;

const free = (now: Date) => [{ claimedUntil: null }, { claimedUntil: { lt: now } }];

/** Sends the due messages; returns how many were sent now. */
export async function deliverDue(db: Db, now = new Date()): Promise<number> {
  const due = await db.alertDelivery.findMany({
    where: { status: "pending", nextAt: { lte: now }, OR: free(now) },
    orderBy: { id: "asc" },
    take: PER_RUN,
    select: { id: true, channelId: true, payload: true, attempts: true },
  });
  // One queue per channel, in order; the channels side by side.
  const queues = new Map<number, typeof due>();
  for (const d of due) queues.set(d.channelId, [...(queues.get(d.channelId) ?? []), d]);
  const limit = pLimit(8);
  let sent = 0;
  await Promise.all(
    [...queues.values()].map((queue) =>
      limit(async () => {
        for (const d of queue) {
          const { count } = await db.alertDelivery.updateMany({
            where: { id: d.id, status: "pending", OR: free(now) },
            data: { claimedUntil: new Date(now.getTime() + CLAIM_MS) },
          });
          if (count === 0) continue;
          const attempts = d.attempts + 1;
          try {
            await sendToChannel(db, d.channelId, d.payload, now.getTime());
            await db.alertDelivery.updateMany({
              where: { id: d.id },
              data: { status: "sent", attempts, sentAt: new Date(), claimedUntil: null, lastError: null },
            });
            sent++;
          } catch (error) {
            if (!(error instanceof AlertRefused)) throw error;
            const wait = BACKOFF_MIN[attempts - 1];
            await db.alertDelivery.updateMany({
              where: { id: d.id },
              data: {
                attempts,
                lastError: error.message.slice(0, 300),
                claimedUntil: null,
                ...(wait === undefined ? { status: "failed" } : { nextAt: new Date(now.getTime() + wait * 60_000) }),
              },
            });
          }
        }
      }),
    ),
  );
  return sent;
}
