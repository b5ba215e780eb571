/**
 * new-api's top-up history, kept for 对账 (docs/design.md 21) where the log's top-up entries carry no
 * amount.
 */
import type { Db } from "../db/client";
import { SiteDataError, type Account, type LedgerReader } from "../site-data/site-data";
import { topupQuota } from "../../shared/log-types";

const owner = (account: Account) => ({ siteId: account.siteId, siteUserId: BigInt(account.siteUserId) });

/**
 * Where the window's top-up entries carry no amount (neither in their quota nor in their text),
 * keeps the site's top-up history (new-api's last 30 days) for 对账 to take the amounts from. A
 * history that cannot be read leaves 对账 to say it cannot explain the top-up; the sync is fine.
 */
export async function noteTopupHistory(
  db: Db,
  account: Account,
  reader: Pick<LedgerReader, "topups" | "quotaPerUnit">,
  from: number,
  to: number,
): Promise<void> {
  const entries = await db.ledgerEntry.findMany({
    where: { ...owner(account), type: "topup", quota: 0n, at: { gte: from, lte: to } },
    select: { content: true },
  });
  if (!entries.some((e) => topupQuota(0, e.content, reader.quotaPerUnit) === null)) return;
  let items;
  try {
    items = await reader.topups();
  } catch (error) {
    if (error instanceof SiteDataError) return;
    throw error;
  }
  for (const t of items ?? []) {
    if (t.status !== "success" || !t.completedAt || !t.tradeNo || t.amountUsd === null) continue;
    const at = Math.floor(Date.parse(t.completedAt) / 1000);
    const quota = BigInt(Math.round(t.amountUsd * reader.quotaPerUnit));
    await db.ledgerTopup.upsert({
      where: { siteId_siteUserId_tradeNo: { ...owner(account), tradeNo: t.tradeNo } },
      create: { ...owner(account), tradeNo: t.tradeNo, at, quota },
      update: { at, quota },
      select: { at: true },
    });
  }
}
