import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parse } from "csv-parse/sync";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CSV_HEADER } from "../../src/server/exports/csv";
import { readersOf } from "../../src/server/ledger/analytics";
import { StatementBusy, statementPdf } from "../../src/server/exports/statement";
import { streamBytes } from "../support/http";
import { sessionStore } from "../../src/server/session/store";
import { dayIn, offsetAt } from "../../src/server/core/time";
import { siteRegistry } from "../../src/server/sites/registry";
import type { StandInLog } from "../../src/demo/gateway";
import { bearer, callerFor, expectBadParam } from "../support/caller";
import { signInAndSync } from "../support/ledger";
import { type TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";

/**
 * Exports read back: the CSV parsed with a CSV parser and compared to the ledger row for row
 * (quoting, a formula-looking cell, Chinese, the BOM and CRLF), the PDF read with pdftotext.
 */

let store: TempDb;
const open: FamilySite[] = [];
const NOW = Math.floor(Date.now() / 1000);
const TZ = "Asia/Shanghai";

freshStorePerTest((s) => (store = s), open);

const TRICKY: Array<Partial<StandInLog>> = [
  { content: '模型 "gpt-4o", 倍率 1.5,\n第二行', model: "gpt-4o" },
  { content: '=HYPERLINK("http://evil.example","点我")', model: "=cmd|' /C calc'!A0" },
  { content: "-2+3", tokenName: "@SUM(A1)" },
  { content: "退款", type: 6, quota: -12_345 },
];

async function synced(index: number, cookie = "", name = "导出站点") {
  const site = await startFamilySite("new-api", index, {}, { days: 35, now: NOW - 120, callsPerDay: 120 });
  open.push(site);
  const base = site.history.logs.find((l) => l.type === 2 && l.createdAt > NOW - 3 * 86_400)!;
  for (const [i, t] of TRICKY.entries()) site.history.logs.push({ ...base, createdAt: NOW - 600 - i, ...t });
  site.history.logs.sort((a, b) => a.createdAt - b.createdAt);
  const { id } = await siteRegistry(store.db).add({ name, url: site.gateway.url });
  return { site, ...(await signInAndSync(store.db, id, site.user, NOW, cookie)) };
}

/** The bytes as text, a BOM kept (Response.text() would drop it). */
async function text(body: ReadableStream<Uint8Array> | Uint8Array): Promise<string> {
  return new TextDecoder("utf-8", { ignoreBOM: true }).decode(await new Response(body as BodyInit).arrayBuffer());
}

const localTime = (at: number) =>
  new Date(at * 1000 + offsetAt(TZ, at * 1000)).toISOString().slice(0, 19).replace("T", " ");

/** A ledger entry's detail as the site logged it. */
const cacheOf = (detail: string) => (detail ? (JSON.parse(detail) as Record<string, number | undefined>) : {});

describe("the CSV export", () => {
  it("parses back to the ledger row for row: quoting, Chinese, neutralized formulas, numbers kept", async () => {
    const a = await synced(0);
    const { api } = callerFor(store.db, bearer(a.token));
    const range = { from: dayIn(TZ, (NOW - 34 * 86_400) * 1000), to: dayIn(TZ, NOW * 1000), tz: TZ };
    const answer = await api.export.usageCsv(range);
    expect(answer.data.filename).toBe(`usage_${range.from}_${range.to}.csv`);
    const csv = await text(answer.data.body);
    expect(csv.startsWith("\uFEFF时间,站点,用户,类型")).toBe(true);
    expect(csv.endsWith("\r\n")).toBe(true);
    expect(
      csv
        .replace(/"[^"]*"/g, "")
        .split("\n")
        .every((l, i, all) => i === all.length - 1 || l.endsWith("\r")),
    ).toBe(true);
    const rows = parse(csv, { bom: true, record_delimiter: "\r\n" });
    expect(rows[0]).toEqual(CSV_HEADER);

    const where = { siteId: a.account.siteId, siteUserId: BigInt(a.account.siteUserId) };
    const from = Date.parse(`${range.from}T00:00:00+08:00`) / 1000;
    const entries = await store.db.ledgerEntry.findMany({
      where: { ...where, at: { gte: from } },
      orderBy: [{ at: "asc" }, { fingerprint: "asc" }, { ordinal: "asc" }],
    });
    expect(rows.length - 1).toBe(entries.length);
    const names: Record<string, string> = {
      consume: "消费",
      topup: "充值",
      manage: "管理",
      refund: "退款",
      error: "错误",
    };
    const cell = (s: string) => (/^[=+\-@\t\r]/.test(s) ? `'${s}` : s);
    // A top-up counts with its amount, which new-api writes only into the text (its quota is 0).
    const topups = new Map(a.site.history.topups.map((t) => [t.createTime + 60, t.amount * 500_000]));
    expect(entries.some((e) => e.type === "topup")).toBe(true);
    entries.forEach((e, i) => {
      const quota = e.type === "topup" ? topups.get(e.at) : Number(e.quota);
      expect(rows[i + 1], `row ${i + 1}`).toEqual([
        localTime(e.at),
        "导出站点",
        "user-new-api",
        names[e.type] ?? e.type,
        cell(e.model),
        cell(e.tokenName),
        String(e.promptTokens),
        String(e.completionTokens),
        String(quota),
        String(Math.round(((quota ?? NaN) / 500_000) * 1e6) / 1e6),
        e.durationMs === null ? "" : String(e.durationMs),
        e.stream ? "是" : "否",
        cell(e.content),
        // A consume entry's cache tokens, as new-api logs them in `other`.
        ...(e.type === "consume"
          ? [String(cacheOf(e.detail).cache_tokens ?? 0), String(cacheOf(e.detail).cache_creation_tokens ?? 0)]
          : ["", ""]),
      ]);
    });
    expect(rows.slice(1).some((r) => Number(r[13]) > 0)).toBe(true);
    // The tricky ones, as a spreadsheet will see them.
    const byContent = (c: string) => rows.find((r) => r[12] === c);
    expect(byContent('模型 "gpt-4o", 倍率 1.5,\n第二行')?.[4]).toBe("gpt-4o");
    expect(byContent('\'=HYPERLINK("http://evil.example","点我")')?.[4]).toBe("'=cmd|' /C calc'!A0");
    expect(byContent("'-2+3")?.[5]).toBe("'@SUM(A1)");
    expect(byContent("退款")?.slice(3, 10)).toEqual(expect.arrayContaining(["退款", "-12345", "-0.02469"]));
  });

  it("filters by type, model and token, counts before the download, and refuses bad parameters", async () => {
    const a = await synced(0);
    const { api } = callerFor(store.db, bearer(a.token));
    const range = { from: dayIn(TZ, (NOW - 10 * 86_400) * 1000), to: dayIn(TZ, NOW * 1000), tz: TZ };
    const filtered = { ...range, type: "consume" as const, model: "gpt-4o" };
    const count = await api.export.count(filtered);
    const answer = await api.export.usageCsv(filtered);
    const rows = parse(await text(answer.data.body), { bom: true }).slice(1);
    expect(rows.length).toBe(count.data.rows);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => `${r[3]} ${r[4]}`))).toEqual(new Set(["消费 gpt-4o"]));
    for (const [input, param] of [
      [{ from: "2026-02-30" }, "from"],
      [{ from: "2024-01-01", to: "2026-04-01" }, "to"],
      [{ from: "2026-05-02", to: "2026-05-01" }, "to"],
      [{ type: "nothing" }, "type"],
      [{ tz: "Nowhere/Town" }, "tz"],
    ] as const) {
      await expectBadParam(api.export.usageCsv(input as never), param);
    }
    for (const [input, param] of [
      [{ month: "2026-13" }, "month"],
      [{ month: "2026-1" }, "month"],
      [{}, "month"],
      [{ month: "2026-10", accounts: "x" }, "accounts"],
    ] as const) {
      await expectBadParam(api.export.statement(input as never), param);
    }
  });
});

describe("the PDF statement", () => {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "gd-pdf-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const pdfText = async (body: unknown) => {
    const file = path.join(dir, "s.pdf");
    writeFileSync(file, await streamBytes(body as ReadableStream<Uint8Array>));
    const pages = Number(/Pages:\s+(\d+)/.exec(execFileSync("pdfinfo", [file]).toString())?.[1]);
    return { text: execFileSync("pdftotext", ["-layout", file, "-"]).toString(), pages };
  };

  it("holds the site, the user, the models and the totals as text; one part per account and a summary", async () => {
    const a = await synced(0);
    const b = await synced(1, a.cookie, "第二个站点");
    // A month with half a month of the entries at least, whatever day of the month today is.
    const month = dayIn(TZ, (NOW - 15 * 86_400) * 1000).slice(0, 7);
    const last = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0)).toISOString();
    const one = await callerFor(store.db, bearer(a.token)).api.export.statement({ month, tz: TZ });
    expect(one.data.filename).toBe(`statement_${month}.pdf`);
    const single = await pdfText(one.data.body);
    const summary = await callerFor(store.db, bearer(a.token)).api.usage.summary({
      from: `${month}-01`,
      to: [last.slice(0, 10), dayIn(TZ, NOW * 1000)].sort()[0]!,
      tz: TZ,
      groupBy: "model",
    });
    const usd = (n: number) =>
      `$${n.toLocaleString("en-US", { minimumFractionDigits: places(n), maximumFractionDigits: places(n) })}`;
    const places = (n: number) => (n !== 0 && Math.abs(n) < 0.99995 ? 4 : 2);
    expect(single.text).toContain(`用量对账单 ${month}`);
    expect(single.text).toContain("导出站点");
    expect(single.text).toContain("user-new-api");
    for (const r of summary.data.rows) expect(single.text).toContain(r.key);
    expect(single.text).toContain(usd(summary.data.totals.usd));
    expect(single.text).toContain(summary.data.totals.requests.toLocaleString("en-US"));
    expect(single.text).toContain("期末余额");
    // Each top-up with its amount, which new-api writes only into the text.
    const topupLines = single.text.split("\n").filter((l) => l.includes("使用在线充值成功"));
    expect(topupLines.length).toBeGreaterThan(0);
    for (const line of topupLines) {
      const named = /充值金额: ＄(\d+)\.0+ 额度/.exec(line)?.[1];
      expect(line.trimEnd().endsWith(usd(Number(named)))).toBe(true);
    }

    const both = await callerFor(store.db, { cookie: b.cookie }).api.export.statement({
      month,
      tz: TZ,
      accounts: "all",
    });
    const multi = await pdfText(both.data.body);
    expect(multi.text).toContain("汇总");
    expect(multi.text).toContain("第二个站点");
    expect(multi.pages).toBe(1 + 2 * single.pages);
  });

  it("renders two statements at once, queues four, and tells the rest to come back later", async () => {
    const a = await synced(0);
    const month = dayIn(TZ, NOW * 1000).slice(0, 7);
    const readers = await readersOf(store.db, [(await sessionStore(store.db).findValid(a.token))!]);
    const calls = Array.from({ length: 12 }, () => statementPdf(store.db, readers, { month, tz: TZ }));
    const settled = await Promise.allSettled(calls);
    const busy = settled.filter((r) => r.status === "rejected");
    expect(busy).toHaveLength(6);
    for (const r of busy) expect(r.reason).toBeInstanceOf(StatementBusy);
    for (const r of settled) {
      if (r.status === "fulfilled") expect((await pdfText(r.value.body)).text).toContain(`用量对账单 ${month}`);
    }
    // Every slot is free again.
    const again = await Promise.allSettled(
      Array.from({ length: 6 }, () => statementPdf(store.db, readers, { month, tz: TZ })),
    );
    expect(again.every((r) => r.status === "fulfilled")).toBe(true);
    for (const r of again) if (r.status === "fulfilled") await streamBytes(r.value.body);
  });
});
