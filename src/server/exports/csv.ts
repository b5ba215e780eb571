/**
 * The usage ledger as CSV for spreadsheets (docs/design.md 14): UTF-8 with a BOM and CRLF line ends
 * (what Excel and WPS on a Chinese Windows open correctly), RFC 4180 quoting, text
 * cells that a spreadsheet would run as a formula neutralized. Streamed from the store a page at a
 * time as the client reads (a pull stream): memory does not grow with the export, the first bytes
 * leave at once, and a client that goes away stops the reading.
 */
import type { Db } from "../db/client";
import { ledgerStore, type EntryCursor, type EntryFilter, type EntryRow } from "../ledger/store";
import type { LogType } from "../gateway/reads";
import { logTypeName, topupQuota } from "../../shared/log-types";
import type { Reader } from "../ledger/analytics";
import { offsetAt } from "../core/time";
import { round6 } from "../../shared/money";

/** Rows read from the store per pull. */
const PAGE = 500;

export const CSV_HEADER = [
  "时间",
  "站点",
  "用户",
  "类型",
  "模型",
  "令牌",
  "输入 tokens",
  "输出 tokens",
  "额度",
  "金额 (USD)",
  "耗时 (ms)",
  "流式",
  "说明",
  "缓存读取 tokens",
  "缓存写入 tokens",
];

/** A consume entry's cache tokens, as its log's detail gives them ("" for other entries). */
function cacheCells(e: EntryRow): [number | string, number | string] {
  if (e.type !== "consume") return ["", ""];
  const c = cacheFigures({ ...e, detail: detailOf(e.detail) });
  return c ? [c.read, c.write] : ["", ""];
}

import { csvRecord, neutralize } from "../core/csv";
import { cacheFigures } from "../gateway/cache-figures";
import { detailOf } from "../ledger/log-view";

export type CsvQuery = {
  /** Calendar days in tz (the file's name). */
  from: string;
  to: string;
  tz: string;
  /** The instants read (Unix seconds, `end` excluded). */
  start: number;
  end: number;
  type?: Exclude<LogType, "other">;
  model?: string;
  token?: string;
};

/** The range's seconds, with the filters. */
function filterOf(q: CsvQuery): EntryFilter {
  return {
    from: q.start,
    to: q.end,
    type: q.type,
    model: q.model,
    token: q.token,
  };
}

/** How many rows the export of these accounts holds. */
export async function csvRowCount(db: Db, readers: Reader[], q: CsvQuery): Promise<number> {
  const filter = filterOf(q);
  let n = 0;
  for (const r of readers) n += await ledgerStore(db).countEntries(r, filter);
  return n;
}

/** `2026-11-23 08:57:10` in the zone: the offset looked up once per hour of entries. */
export function timeFormatter(tz: string) {
  const offsets = new Map<number, number>();
  return (at: number) => {
    const hour = at - (at % 3600);
    let offset = offsets.get(hour);
    if (offset === undefined) {
      offset = offsetAt(tz, hour * 1000);
      offsets.set(hour, offset);
    }
    return new Date(at * 1000 + offset).toISOString().slice(0, 19).replace("T", " ");
  };
}

/** The session ended while its download was under way: the download stops there. */
export class ExportSessionEnded extends Error {
  constructor() {
    super("session ended during the export");
  }
}

/**
 * A CSV as a pull stream: the BOM and the header first, then a chunk per pull from `next` (null:
 * the end), one chunk ahead at most, so the store is read only as fast as the client takes it.
 * `onEnd` hears whether the client read to the end; `close` lets go of what the reading holds
 * (at the end, on an error, when the client goes away).
 */
export function csvStream(
  header: string[],
  next: () => Promise<string | null>,
  onEnd: (complete: boolean) => void,
  close: () => void = () => undefined,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let started = false;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          if (!started) {
            started = true;
            controller.enqueue(encoder.encode(`\uFEFF${csvRecord(header)}`));
            return;
          }
          const text = await next();
          if (text === null) {
            close();
            controller.close();
            onEnd(true);
            return;
          }
          controller.enqueue(encoder.encode(text));
        } catch (error) {
          close();
          onEnd(false);
          controller.error(error);
        }
      },
      cancel() {
        close();
        onEnd(false);
      },
    },
    { highWaterMark: 1 },
  );
}

/**
 * The export as a byte stream, account after account, each by time; `onEnd` hears how many rows
 * went out, and whether the client read to the end. Before each batch the sessions it is read
 * with are checked again (`live`): a download does not outlive a sign-out.
 */
export function usageCsv(
  db: Db,
  readers: Reader[],
  q: CsvQuery,
  live: (reader: Reader) => Promise<boolean>,
  onEnd: (rows: number, complete: boolean) => void,
): ReadableStream<Uint8Array> {
  const filter = filterOf(q);
  const time = timeFormatter(q.tz);
  const store = ledgerStore(db);
  let account = 0;
  let cursor: EntryCursor | null = null;
  let rows = 0;
  const names = new Map(
    readers.map((r) => [r, [neutralize(r.site?.name ?? "（站点已移除）"), neutralize(r.username || String(r.userId))]]),
  );
  const line = (r: Reader, e: EntryRow) => {
    // A top-up the site wrote only into its text counts with the amount the text names.
    const quota = e.type === "topup" ? (topupQuota(e.quota, e.content, r.quotaPerUnit) ?? 0) : e.quota;
    return [
      time(e.at),
      ...(names.get(r) as string[]),
      logTypeName(e.type),
      neutralize(e.model),
      neutralize(e.tokenName),
      e.promptTokens,
      e.completionTokens,
      quota,
      round6(quota / r.quotaPerUnit),
      e.durationMs ?? "",
      e.stream ? "是" : "否",
      neutralize(e.content),
      ...cacheCells(e),
    ];
  };
  const next = async (): Promise<string | null> => {
    for (;;) {
      const reader = readers[account];
      if (!reader) return null;
      if (!(await live(reader))) throw new ExportSessionEnded();
      cursor ??= store.openEntries(reader, filter);
      const page = await cursor.next(PAGE);
      if (page.length < PAGE) {
        cursor.close();
        cursor = null;
        account++;
      }
      if (page.length === 0) continue;
      rows += page.length;
      let text = "";
      for (const e of page) text += csvRecord(line(reader, e));
      return text;
    }
  };
  return csvStream(
    CSV_HEADER,
    next,
    (complete) => onEnd(rows, complete),
    () => {
      cursor?.close();
      cursor = null;
    },
  );
}

/** A file name that says the range: `usage_2026-10-01_2026-10-31.csv`. */
export function csvFileName(q: CsvQuery): string {
  return `usage_${q.from}_${q.to}.csv`;
}
