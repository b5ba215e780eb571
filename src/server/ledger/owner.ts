/**
 * An account whose ledger is read, and how far (docs/design.md 24): a reader that no longer holds the
 * account reads its entries, hours, snapshots and top-ups before `until` only (the first second of
 * an hour).
 */
import type { LiveSession } from "../session/store";

export type Owner = { siteId: number; siteUserId: number; until?: number };

/** The owner a live session reads: bounded where the session no longer holds the account. */
export const ownerOfSession = (s: LiveSession): Owner => ({
  siteId: s.siteId,
  siteUserId: s.siteUserId,
  ...(s.heldUntil === undefined ? {} : { until: s.heldUntil }),
});

/** The bound of an owner read without one (past every second an INTEGER column holds). */
const NO_BOUND = 2147483647;
export const boundOf = (o: { until?: number }) => o.until ?? NO_BOUND;

/** An account's key in maps of many accounts: "siteId:siteUserId". */
export const ownerKey = (o: { siteId: number; siteUserId: number | bigint }) => `${o.siteId}:${o.siteUserId}`;

/** A Prisma filter of one owner's rows, in `column` (seconds) within `range` and before its bound. */
export function ownerWhere<C extends "at" | "hour" = "at">(
  o: Owner,
  range: { gte?: number; gt?: number; lt?: number; lte?: number } = {},
  column: C = "at" as C,
) {
  const within = { ...range, lt: Math.min(range.lt ?? NO_BOUND, boundOf(o)) };
  return { siteId: o.siteId, siteUserId: BigInt(o.siteUserId), [column]: within } as {
    siteId: number;
    siteUserId: bigint;
  } & Record<C, typeof within>;
}
