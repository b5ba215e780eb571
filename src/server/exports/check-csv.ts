/**
 * 核对's flagged entries as CSV (docs/design.md 27): every consume entry of the range whose charge
 * differs from its own logged ratios or from the site's list, oldest first, with both
 * expectations, in quota units and USD. UTF-8 with a BOM and CRLF, like the ledger's CSV; read a
 * page of flags at a time.
 */
import type { Db } from "../db/client";
import { csvRecord, neutralize } from "../core/csv";
import type { Reader } from "../ledger/analytics";
import { boundOf } from "../ledger/owner";
import { flagSelect, flaggedEntries } from "../ledger/check-view";
import { dayStart, nextDay } from "../core/time";
import { timeFormatter } from "./csv";

const HEADER = [
  "时间",
  "站点",
  "账户",
  "模型",
  "令牌",
  "输入 tokens",
  "输出 tokens",
  "实际扣费（额度）",
  "实际扣费 (USD)",
  "按日志倍率应扣（额度）",
  "按日志倍率应扣 (USD)",
  "按价目表应扣（额度）",
  "按价目表应扣 (USD)",
  "多扣 (USD)",
  "说明",
];
const PAGE = 1000;

export async function checkCsv(
  db: Db,
  readers: Reader[],
  q: { from: string; to: string; tz: string },
): Promise<{ body: Uint8Array; rows: number }> {
  const from = dayStart(q.tz, q.from) / 1000;
  const to = dayStart(q.tz, nextDay(q.to)) / 1000;
  const time = timeFormatter(q.tz);
  let out = `\uFEFF${csvRecord(HEADER)}`;
  let rows = 0;
  for (const r of readers) {
    let after = { at: from - 1, entryId: 0 };
    for (;;) {
      const page = await db.ledgerFlag.findMany({
        where: {
          siteId: r.siteId,
          siteUserId: BigInt(r.siteUserId),
          at: { gte: from, lt: Math.min(to, boundOf(r)) },
          OR: [{ at: { gt: after.at } }, { at: after.at, entryId: { gt: after.entryId } }],
        },
        orderBy: [{ at: "asc" }, { entryId: "asc" }],
        take: PAGE,
        select: flagSelect,
      });
      for (const f of await flaggedEntries(db, [r], page)) {
        out += csvRecord([
          time(Date.parse(f.at) / 1000),
          neutralize(f.site),
          neutralize(f.account),
          neutralize(f.model),
          neutralize(f.tokenName),
          f.promptTokens,
          f.completionTokens,
          f.quota,
          f.chargedUsd,
          f.expected ?? "",
          f.expectedUsd ?? "",
          f.listExpected ?? "",
          f.listExpectedUsd ?? "",
          f.overUsd,
          neutralize(f.note),
        ]);
        rows++;
      }
      const last = page[page.length - 1];
      if (!last || page.length < PAGE) break;
      after = { at: last.at, entryId: last.entryId };
    }
  }
  return { body: new TextEncoder().encode(out), rows };
}

export const checkFileName = (q: { from: string; to: string }) => `charge-check_${q.from}_${q.to}.csv`;
