/**
 * 预计可用天数, the one definition every surface shows (docs/figures.md): the days an account's
 * wallet and its plans together last at the account's pace of the last 7 × 24 hours (the ledger's
 * consumption, the current hour included), one decimal; null without a balance or without spend
 * in those hours.
 */
import type { Db } from "../db/client";
import { weekPace } from "./analytics";
import { ownerKey, type Owner } from "./owner";
import { daysLeftWith, storedPlans } from "./plans";

/** 预计可用天数 of one account at `balance` (quota units: what the surface shows as its balance). */
export async function daysLeftOf(
  db: Db,
  owner: Owner,
  balance: number | null,
  now = Date.now(),
): Promise<number | null> {
  if (balance === null) return null;
  const nowSeconds = Math.floor(now / 1000);
  const [plans, pace] = await Promise.all([storedPlans(db, [owner]), weekPace(db, owner, nowSeconds)]);
  return daysLeftWith(plans.get(ownerKey(owner)), balance, pace, nowSeconds);
}
