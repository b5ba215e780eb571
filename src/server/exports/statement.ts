/**
 * A month's statement as PDF (docs/design.md 14), rendered on the server with pdfkit from what
 * statement-data.ts gathers: per account the
 * site and user, the month's spend in USD and in the site's own currency, the opening and closing
 * balance where syncs noted them, spend by model and by token, spend per day as a chart, the
 * top-ups, and the range the ledger covered (a month not fully synced says so); a summary page
 * first when there are several accounts. Chinese text is embedded as text with Noto Sans SC from
 * its npm package (subset to the glyphs used), so it can be searched and copied.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { Readable } from "node:stream";
import PDFDocument from "pdfkit";
import { formatMoney, formatUsd, round6 } from "../../shared/money";
import { topupQuota } from "../../shared/log-types";
import { Refusal } from "../core/errors";
import { processState, type StatePart } from "../core/process-state";
import { MSG } from "../core/messages";
import type { Db } from "../db/client";
import type { Reader, UsageSummary } from "../ledger/analytics";
import { minuteIn } from "../core/time";
import { partOf, type Part } from "./statement-data";

const FONT_FILES = {
  regular: "@expo-google-fonts/noto-sans-sc/400Regular/NotoSansSC_400Regular.ttf",
  bold: "@expo-google-fonts/noto-sans-sc/700Bold/NotoSansSC_700Bold.ttf",
};

let fonts: { regular: Buffer; bold: Buffer } | undefined;

/** The font files, read once (from the package in node_modules; nothing is downloaded). */
function fontData() {
  if (!fonts) {
    const load = (file: string) => {
      try {
        return readFileSync(path.join(process.cwd(), "node_modules", file));
      } catch {
        // Found at run time, not bundled: the build is told not to follow it.
        return readFileSync(createRequire(import.meta.url).resolve(/* turbopackIgnore: true */ file));
      }
    };
    fonts = { regular: load(FONT_FILES.regular), bold: load(FONT_FILES.bold) };
  }
  return fonts;
}

export function statementFileName(month: string): string {
  return `statement_${month}.pdf`;
}

const int = (n: number) => n.toLocaleString("en-US");

type Doc = PDFKit.PDFDocument;

/** Rows of a by-model or by-token table; the rest are summed in one row (users name tokens freely). */
const STATEMENT_TOP_ROWS = 30;

/** The largest rows (they come largest first), and one 其他 row for the rest. */
function topRows(rows: UsageSummary["rows"]): UsageSummary["rows"] {
  if (rows.length <= STATEMENT_TOP_ROWS) return rows;
  const rest = rows.slice(STATEMENT_TOP_ROWS - 1);
  const other = rest.reduce(
    (s, r) => ({
      key: `其他（${rest.length} 项）`,
      requests: s.requests + r.requests,
      quota: s.quota + r.quota,
      promptTokens: s.promptTokens + r.promptTokens,
      completionTokens: s.completionTokens + r.completionTokens,
      usd: round6(s.usd + r.usd),
    }),
    { key: "", requests: 0, quota: 0, promptTokens: 0, completionTokens: 0, usd: 0 },
  );
  return [...rows.slice(0, STATEMENT_TOP_ROWS - 1), other];
}

const MARGIN = 50;
const WIDTH = 595.28 - 2 * MARGIN;
const BOTTOM = 841.89 - MARGIN;
const MUTED = "#667085";
const ACCENT = "#2f6fed";

function ensureRoom(doc: Doc, height: number) {
  if (doc.y + height > BOTTOM) doc.addPage();
}

function heading(doc: Doc, text: string) {
  ensureRoom(doc, 60);
  doc.moveDown(0.8).font("bold").fontSize(12).fillColor("#1c2430").text(text, MARGIN, doc.y);
  doc.moveDown(0.3);
}

/** A table: the first column left, the rest right-aligned; rows over the page go on the next. */
function table(
  doc: Doc,
  columns: Array<{ title: string; width: number; align?: "left" | "right" }>,
  rows: string[][],
  total?: string[],
) {
  const rowHeight = 16;
  const drawRow = (cells: string[], bold: boolean, color = "#1c2430") => {
    ensureRoom(doc, rowHeight + 4);
    const y = doc.y;
    let x = MARGIN;
    doc
      .font(bold ? "bold" : "regular")
      .fontSize(9)
      .fillColor(color);
    cells.forEach((cell, i) => {
      const col = columns[i] as { width: number };
      doc.text(cell, x + 2, y + 3, {
        width: col.width - 4,
        align: i === 0 ? "left" : "right",
        lineBreak: false,
        ellipsis: true,
      });
      x += col.width;
    });
    doc
      .moveTo(MARGIN, y + rowHeight)
      .lineTo(MARGIN + WIDTH, y + rowHeight)
      .lineWidth(0.5)
      .strokeColor("#e4e7ec")
      .stroke();
    doc.y = y + rowHeight;
  };
  drawRow(
    columns.map((c) => c.title),
    true,
    MUTED,
  );
  for (const r of rows) drawRow(r, false);
  if (total) drawRow(total, true);
  doc.x = MARGIN;
}

/** Spend per day as bars, the largest day labeled. */
function dailyChart(doc: Doc, days: UsageSummary) {
  const height = 120;
  ensureRoom(doc, height + 30);
  const top = doc.y + 6;
  const max = Math.max(...days.rows.map((r) => r.usd), 0);
  const step = WIDTH / Math.max(days.rows.length, 1);
  doc.lineWidth(0.5).strokeColor("#cfd4dc");
  doc
    .moveTo(MARGIN, top + height)
    .lineTo(MARGIN + WIDTH, top + height)
    .stroke();
  days.rows.forEach((r, i) => {
    const h = max > 0 ? (r.usd / max) * height : 0;
    if (h > 0) doc.rect(MARGIN + i * step + step * 0.15, top + height - h, step * 0.7, h).fill(ACCENT);
  });
  doc.font("regular").fontSize(7).fillColor(MUTED);
  days.rows.forEach((r, i) => {
    if (i % 5 === 0 || i === days.rows.length - 1) {
      doc.text(r.key.slice(8), MARGIN + i * step, top + height + 3, { width: step, align: "center", lineBreak: false });
    }
  });
  doc.text(`最高 ${formatUsd(max)} / 天`, MARGIN, top - 2, { width: WIDTH, align: "right", lineBreak: false });
  doc.x = MARGIN;
  doc.y = top + height + 16;
}

/** 核对 of the month by model: what was charged, what the entries' ratios and the site's list make. */
function writeCheck(doc: Doc, part: Part) {
  heading(doc, "核对（扣费与日志倍率、站点价目表）");
  const { totals, rows } = part.check;
  const line = (text: string) => doc.font("regular").fontSize(9).fillColor(MUTED).text(text, MARGIN, doc.y);
  if (totals.entries === 0) return void line("本月没有已核对的消费记录");
  line(
    `已核对 ${int(totals.entries)} 条：与日志倍率不符 ${int(totals.differs)} 条，与价目表不符 ${int(totals.listDiffers)} 条，` +
      (totals.overUsd < 0 ? `少扣合计 ${formatUsd(-totals.overUsd)}。` : `多扣合计 ${formatUsd(totals.overUsd)}。`),
  );
  doc.moveDown(0.3);
  table(
    doc,
    [
      { title: "模型", width: WIDTH - 5 * 66 },
      { title: "实际扣费", width: 66 },
      { title: "按倍率应扣", width: 66 },
      { title: "按价目表应扣", width: 66 },
      { title: "不符条数", width: 66 },
      { title: "多扣", width: 66 },
    ],
    rows
      .slice(0, STATEMENT_TOP_ROWS)
      .map((r) => [
        r.model || "（未命名）",
        formatUsd(r.chargedUsd),
        r.checked === 0 ? "无法复算" : formatUsd(r.expectedUsd),
        r.listChecked === 0 ? "无法比对" : formatUsd(r.listExpectedUsd),
        `${int(r.differs)} / ${int(r.listDiffers)}`,
        r.overUsd === 0 ? "—" : formatUsd(r.overUsd),
      ]),
  );
}

function accountTitle(part: Part) {
  const r = part.reader;
  return `${r.site?.name ?? "（站点已移除）"} · ${r.username || "用户"}（ID ${r.userId}）`;
}

function writePart(doc: Doc, part: Part, month: string, tz: string, now: number) {
  const { reader, days } = part;
  doc.font("bold").fontSize(18).fillColor("#1c2430").text(`用量对账单 ${month}`, MARGIN, MARGIN);
  doc.font("regular").fontSize(11).fillColor("#1c2430").text(accountTitle(part));
  doc
    .fontSize(9)
    .fillColor(MUTED)
    .text(`时区 ${tz} · 生成于 ${minuteIn(tz, now)}`);
  const covered =
    part.coverage.oldest && part.coverage.newest
      ? `账本覆盖 ${minuteIn(tz, Date.parse(part.coverage.oldest))} 至 ${minuteIn(tz, Date.parse(part.coverage.newest))}`
      : "账本尚未同步";
  doc.text(covered);
  if (!part.complete) {
    doc.font("bold").fillColor("#c0362c").text("注意：本月未完全同步，以下数字只含账本已覆盖的部分。");
  }
  doc.moveDown(0.6);

  const t = days.totals;
  const figures: Array<[string, string]> = [
    ["本月消费（美元）", formatUsd(t.usd)],
    ["本月消费（站点货币）", formatMoney(t.quota, reader.money)],
    ["请求数", int(t.requests)],
    ["tokens（输入 / 输出）", `${int(t.promptTokens)} / ${int(t.completionTokens)}`],
    [
      "期初余额",
      part.opening
        ? `${formatUsd(part.opening.quota / reader.quotaPerUnit)}（${minuteIn(tz, part.opening.at * 1000)}）`
        : "无记录（本月之前没有同步过）",
    ],
    [
      "期末余额",
      part.closing
        ? `${formatUsd(part.closing.quota / reader.quotaPerUnit)}（${minuteIn(tz, part.closing.at * 1000)}）`
        : "无记录（本月没有同步过）",
    ],
  ];
  for (const [label, value] of figures) {
    const y = doc.y;
    doc.font("regular").fontSize(10).fillColor(MUTED).text(label, MARGIN, y, { width: 150, lineBreak: false });
    doc
      .font("bold")
      .fillColor("#1c2430")
      .text(value, MARGIN + 150, y, { width: WIDTH - 150, lineBreak: false });
    doc.y = y + 16;
  }

  heading(doc, "每日消费");
  dailyChart(doc, days);

  const cols = (first: string) => [
    { title: first, width: WIDTH - 4 * 80 },
    { title: "请求", width: 80 },
    { title: "输入 tokens", width: 80 },
    { title: "输出 tokens", width: 80 },
    { title: "消费（美元）", width: 80 },
  ];
  const rowsOf = (s: UsageSummary) =>
    topRows(s.rows).map((r) => [
      r.key || "（未命名）",
      int(r.requests),
      int(r.promptTokens),
      int(r.completionTokens),
      formatUsd(r.usd),
    ]);
  const totalOf = (s: UsageSummary) => [
    "合计",
    int(s.totals.requests),
    int(s.totals.promptTokens),
    int(s.totals.completionTokens),
    formatUsd(s.totals.usd),
  ];
  heading(doc, "按模型");
  if (part.models.rows.length === 0) doc.font("regular").fontSize(9).fillColor(MUTED).text("本月没有消费记录");
  else table(doc, cols("模型"), rowsOf(part.models), totalOf(part.models));
  heading(doc, "按令牌");
  if (part.tokens.rows.length === 0) doc.font("regular").fontSize(9).fillColor(MUTED).text("本月没有消费记录");
  else table(doc, cols("令牌"), rowsOf(part.tokens), totalOf(part.tokens));

  writeCheck(doc, part);

  heading(doc, "充值");
  if (part.topups.length === 0) {
    doc.font("regular").fontSize(9).fillColor(MUTED).text("本月账本中没有充值记录");
  } else {
    table(
      doc,
      [
        { title: "时间", width: 110 },
        { title: "说明", width: WIDTH - 190, align: "left" },
        { title: "金额", width: 80 },
      ],
      part.topups.map((x) => {
        const quota = topupQuota(x.quota, x.content, reader.quotaPerUnit);
        return [
          minuteIn(tz, x.at * 1000),
          x.content || "充值",
          quota === null ? "—" : formatMoney(quota, reader.money),
        ];
      }),
    );
  }
}

function writeSummary(doc: Doc, parts: Part[], month: string, tz: string, now: number) {
  doc.font("bold").fontSize(18).fillColor("#1c2430").text(`用量对账单 ${month} · 汇总`, MARGIN, MARGIN);
  doc
    .font("regular")
    .fontSize(9)
    .fillColor(MUTED)
    .text(`${parts.length} 个账户 · 时区 ${tz} · 生成于 ${minuteIn(tz, now)}`);
  doc.moveDown(0.8);
  const total = parts.reduce(
    (s, p) => ({
      usd: s.usd + p.days.totals.usd,
      requests: s.requests + p.days.totals.requests,
      tokens: s.tokens + p.days.totals.promptTokens + p.days.totals.completionTokens,
    }),
    { usd: 0, requests: 0, tokens: 0 },
  );
  table(
    doc,
    [
      { title: "账户", width: WIDTH - 3 * 90 },
      { title: "请求", width: 90 },
      { title: "tokens", width: 90 },
      { title: "消费（美元）", width: 90 },
    ],
    parts.map((p) => [
      `${accountTitle(p)}${p.complete ? "" : "（未完全同步）"}`,
      int(p.days.totals.requests),
      int(p.days.totals.promptTokens + p.days.totals.completionTokens),
      formatUsd(p.days.totals.usd),
    ]),
    ["合计", int(total.requests), int(total.tokens), formatUsd(round6(total.usd))],
  );
}

/** Statements rendered at once by this process; a few more wait, the rest are told to come back. */
const RENDERS_AT_ONCE = 2;
const RENDERS_WAITING = 4;
/** This process's statement renders: how many are running, and who waits for a slot. */
const RENDERS: StatePart<{ rendering: number; waiting: Array<() => void> }> = {
  name: "statement-renders",
  create: () => ({ rendering: 0, waiting: [] }),
};

/** Every render slot is taken and the queue is full: try again in a few seconds. */
export class StatementBusy extends Refusal {
  constructor() {
    super(MSG.statementBusy, "SERVICE_UNAVAILABLE", 5);
  }
}

/** A render slot (waited for when the queue has room); the returned function gives it back, once. */
async function renderSlot(): Promise<() => void> {
  const slots = processState().get(RENDERS);
  if (slots.rendering >= RENDERS_AT_ONCE) {
    if (slots.waiting.length >= RENDERS_WAITING) throw new StatementBusy();
    await new Promise<void>((resolve) => slots.waiting.push(resolve));
  } else {
    slots.rendering++;
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = slots.waiting.shift();
    // The slot passes straight to the next in line.
    if (next) next();
    else slots.rendering--;
  };
}

/** "第 N 页" at the foot of each page as it is added (the document streams, so no total). */
function numberPages(doc: Doc): void {
  let page = 0;
  doc.on("pageAdded", () => {
    page++;
    const { x, y } = doc;
    const bottom = doc.page.margins.bottom;
    // The footer sits in the bottom margin, where pdfkit would otherwise start a new page.
    doc.page.margins.bottom = 0;
    doc
      .font("regular")
      .fontSize(8)
      .fillColor(MUTED)
      .text(`第 ${page} 页`, MARGIN, BOTTOM + 20, { width: WIDTH, align: "center", lineBreak: false });
    doc.page.margins.bottom = bottom;
    doc.x = x;
    doc.y = y;
  });
}

/**
 * The month's statement of the accounts as a PDF stream; `entries` is how many consume entries it
 * sums. At most RENDERS_AT_ONCE are made at once (StatementBusy when the queue is full too).
 */
export async function statementPdf(
  db: Db,
  readers: Reader[],
  q: { month: string; tz: string },
  now = Date.now(),
): Promise<{ body: ReadableStream<Uint8Array>; entries: number }> {
  const release = await renderSlot();
  try {
    const parts = await Promise.all(readers.map((r) => partOf(db, r, q.month, q.tz, now)));
    const { regular, bold } = fontData();
    const doc = new PDFDocument({
      size: "A4",
      margin: MARGIN,
      autoFirstPage: false,
      info: { Title: `用量对账单 ${q.month}`, Creator: "网关站点控制台", CreationDate: new Date(now) },
    });
    doc.registerFont("regular", regular);
    doc.registerFont("bold", bold);
    numberPages(doc);
    doc.addPage();
    if (parts.length > 1) writeSummary(doc, parts, q.month, q.tz, now);
    parts.forEach((part, i) => {
      if (i > 0 || parts.length > 1) doc.addPage();
      writePart(doc, part, q.month, q.tz, now);
    });
    doc.end();
    const body = Readable.toWeb(doc) as ReadableStream<Uint8Array>;
    return { body, entries: parts.reduce((s, p) => s + p.days.totals.requests, 0) };
  } finally {
    // Rendering is what the slot bounds; the finished document waits for its reader on its own.
    release();
  }
}
