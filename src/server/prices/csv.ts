/**
 * The comparison as CSV (docs/design.md 22): a row per model and account with its price for the
 * account's group and what it is actually charged (核对's factor on its entries), in USD; UTF-8
 * with a BOM and CRLF, like the other exports.
 */
import { csvRecord, neutralize } from "../core/csv";
import type { PriceTable } from "./compare";

const PRICES_HEADER = [
  "模型",
  "站点",
  "账户",
  "分组",
  "分组倍率",
  "每百万输入 (USD)",
  "每百万输出 (USD)",
  "每次 (USD)",
  "由日志推算",
  "核对倍数",
  "实际每百万输入 (USD)",
  "实际每百万输出 (USD)",
  "实际每次 (USD)",
  "实际价格依据",
  "可用",
  "最便宜",
];

/** What the actual price rests on (compare.ts Effective). */
const BASIS = { charged: "核对", list: "价目表（估计）", logs: "日志推算（估计）" } as const;

const figure = (n: number | null) => (n === null ? "" : String(n));

export function pricesCsv(table: PriceTable): Uint8Array {
  let out = `\uFEFF${csvRecord(PRICES_HEADER)}`;
  for (const m of table.models) {
    m.cells.forEach((c, i) => {
      const a = table.accounts[i];
      if (!c || !a) return;
      out += csvRecord([
        neutralize(m.model),
        neutralize(a.siteName),
        neutralize(a.name),
        neutralize(a.group ?? ""),
        figure(c.groupRatio),
        figure(c.inputPerMillionUsd),
        figure(c.outputPerMillionUsd),
        figure(c.perCallUsd),
        c.derivedFromLogs ? "是" : "否",
        figure(c.charged?.factor ?? null),
        figure(c.effective.inputPerMillionUsd),
        figure(c.effective.outputPerMillionUsd),
        figure(c.effective.perCallUsd),
        BASIS[c.effective.basis],
        c.usable ? "是" : "否",
        c.cheapest ? "是" : "否",
      ]);
    });
  }
  return new TextEncoder().encode(out);
}
