/**
 * 对账 as its own CSV (docs/design.md 21): for each account and day of the range, the balance change
 * between the day's snapshots against what the log explains, and the difference, in USD. UTF-8
 * with a BOM and CRLF, like the ledger's CSV.
 */
import type { Db } from "../db/client";
import { csvRecord, neutralize } from "../core/csv";
import type { Reader } from "../ledger/analytics";
import { reconcile, reconciledUsd } from "../ledger/reconcile";

const RECONCILIATION_HEADER = [
  "日期",
  "站点",
  "用户",
  "起始快照",
  "结束快照",
  "余额变化 (USD)",
  "消费 (USD)",
  "充值 (USD)",
  "签到奖励 (USD)",
  "退款 (USD)",
  "无金额的调整（条）",
  "日志应有变化 (USD)",
  "差额 (USD)",
  "不符",
];

export async function reconciliationCsv(
  db: Db,
  readers: Reader[],
  q: { from: string; to: string; tz: string },
): Promise<{ body: Uint8Array; rows: number; flagged: number }> {
  let out = `\uFEFF${csvRecord(RECONCILIATION_HEADER)}`;
  let rows = 0;
  let flagged = 0;
  for (const r of readers) {
    const days = await reconcile(db, r, q);
    for (const d of days.map((day) => reconciledUsd(day, r.quotaPerUnit))) {
      out += csvRecord([
        d.day,
        neutralize(r.site?.name ?? "已移除的站点"),
        neutralize(r.username || String(r.userId)),
        d.from ?? "",
        d.to ?? "",
        d.changeUsd ?? "",
        d.consumptionUsd,
        d.topupsUsd,
        d.rewardsUsd,
        d.refundsUsd,
        d.adjustments,
        d.expectedUsd ?? "",
        d.differenceUsd ?? "",
        d.flagged ? "是" : d.differenceUsd === null ? "快照不足" : "否",
      ]);
      rows++;
      if (d.flagged) flagged++;
    }
  }
  return { body: new TextEncoder().encode(out), rows, flagged };
}

export const reconciliationFileName = (q: { from: string; to: string }) => `reconciliation_${q.from}_${q.to}.csv`;
