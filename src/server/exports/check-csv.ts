/**
 * 核对's flagged entries as CSV (docs/design.md 27): every consume entry of the range whose charge
 * differs from its own logged ratios or from the site's list, oldest first, with both
 * expectations, in quota units and USD. UTF-8 with a BOM and CRLF, like the ledger's CSV; streamed,
 * a page of flags at a time.
 */
import type { Db } from "../db/client";
import { csvRecord, neutralize } from "../core/csv";
import type { Reader } from "../ledger/analytics";
import { boundOf } from "../ledger/owner";
import { flagSelect, flaggedEntries } from "../ledger/check-view";
import { dayStart, nextDay } from "../core/time";
import { ExportSessionEnded, csvStream, timeFormatter } from "./csv";

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

/**
 * The CSV as a byte stream, a page of flags at a time as the client takes it (memory the same
 * whatever the count); `live` is asked before each page (a download does not outlive a
 * sign-out), `onEnd` hears how many rows went out and whether the client read to the end.
 */
export function checkCsv(
  db: Db,
  readers: Reader[],
  q: { from: string; to: string; tz: string },
  live: (reader: Reader) => Promise<boolean> = () => Promise.resolve(true),
  onEnd: (rows: number, complete: boolean) => void = () => undefined,
): ReadableStream<Uint8Array> {
  const from = dayStart(q.tz, q.from) / 1000;
  const to = dayStart(q.tz, nextDay(q.to)) / 1000;
  const time = timeFormatter(q.tz);
  let rows = 0;
  let account = 0;
  let after: { at: number; entryId: number } | null = null;
  const line = (f: Awaited<ReturnType<typeof flaggedEntries>>[number]) =>
    csvRecord([
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
  const next = async (): Promise<string | null> => {
    for (;;) {
      const r = readers[account];
      if (!r) return null;
      if (!(await live(r))) throw new ExportSessionEnded();
      const last = after ?? { at: from - 1, entryId: 0 };
      const page = await db.ledgerFlag.findMany({
        where: {
          siteId: r.siteId,
          siteUserId: BigInt(r.siteUserId),
          at: { gte: from, lt: Math.min(to, boundOf(r)) },
          OR: [{ at: { gt: last.at } }, { at: last.at, entryId: { gt: last.entryId } }],
        },
        orderBy: [{ at: "asc" }, { entryId: "asc" }],
        take: PAGE,
        select: flagSelect,
      });
      const end = page[page.length - 1];
      if (!end || page.length < PAGE) {
        account++;
        after = null;
      } else after = { at: end.at, entryId: end.entryId };
      if (page.length === 0) continue;
      const entries = await flaggedEntries(db, [r], page);
      rows += entries.length;
      return entries.map(line).join("");
    }
  };
  return csvStream(HEADER, next, (complete) => onEnd(rows, complete));
}

export const checkFileName = (q: { from: string; to: string }) => `charge-check_${q.from}_${q.to}.csv`;
