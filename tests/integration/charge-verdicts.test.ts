import { describe, expect, it } from "vitest";
import type { StandInFamily } from "../../src/demo/gateway";
import { demoPricing } from "../../src/demo/history";
import { parsePrices } from "../../src/server/gateway/prices";
import { verifyCharges } from "../../src/server/ledger/check";
import { listSource } from "../../src/server/prices/lists";
import { priceStore } from "../../src/server/prices/store";
import { siteRegistry } from "../../src/server/sites/registry";
import { bearer, callerFor } from "../support/caller";
import type { TempDb } from "../support/db";
import { freshStorePerTest, startFamilySite, type FamilySite } from "../support/families";
import { signInAndSync } from "../support/ledger";
import { parse } from "csv-parse/sync";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { streamBytes } from "../support/http";
import { SPEED_BOUNDS, bucketOf, firstTokenMs, quantileMs } from "../../src/server/gateway/speed";
import { accountOf } from "../../src/server/accounts/overview";
import { evaluateAlerts } from "../../src/server/jobs/alerts";
import { syncLedger } from "../../src/server/ledger/sync";
import { readSitePrices } from "../../src/server/prices/read";
import { refreshPrices } from "../../src/server/prices/compare";
import { sessionStore } from "../../src/server/session/store";

/**
 * 核对 (docs/design.md 27): the verifying pass takes each consume entry of the ledger once, against
 * its own logged ratios at once and against the site's list once that list is read; the sums
 * reconcile with the ledger's own, the one entry charged a quarter more than its ratios is found,
 * and on the hubs (their list a fifth cheaper for Claude than what their log bills) every Claude
 * entry is told, with what the list would have charged.
 */
let store: TempDb;
const open: FamilySite[] = [];
freshStorePerTest((s) => (store = s), open);

const NOW = Math.floor(Date.now() / 1000);
const today = new Date(NOW * 1000).toISOString().slice(0, 10);
const range = { from: new Date((NOW - 3 * 86_400) * 1000).toISOString().slice(0, 10), to: today, tz: "UTC" };

async function verified(family: StandInFamily) {
  const site = await startFamilySite(family, 0, {}, { days: 2, now: NOW - 60, callsPerDay: 40 });
  open.push(site);
  const consume = site.history.logs.filter((l) => l.type === 2);
  // The costliest call: a quarter more is then well beyond the hubs' one unit of rounding (a
  // small call's quarter may be within it, and which calls are small follows the clock).
  const victim = consume.reduce((a, b) => (b.quota > a.quota ? b : a));
  const fair = victim.quota;
  victim.quota = Math.round(fair * 1.25);
  const { id } = await siteRegistry(store.db).add({ name: `站点 ${family}`, url: site.gateway.url });
  const { token } = await signInAndSync(store.db, id, site.user, NOW);
  const api = callerFor(store.db, bearer(token)).api;
  return { site, id, api, consume, victim, fair };
}

/** The pass, twice: on PostgreSQL the first only marks how far the table went (the horizon). */
async function verify() {
  await verifyCharges(store.db, listSource(store.db));
  await verifyCharges(store.db, listSource(store.db));
}

const hubLike = (f: StandInFamily) => f === "one-hub" || f === "done-hub";

describe("核对", () => {
  it.each(["new-api", "one-hub", "done-hub"] as StandInFamily[])(
    "on %s: the ratios' verdict first, the list's once it is read, summed as the ledger sums",
    async (family) => {
      const { id, api, consume, victim, fair } = await verified(family);
      // Before the pass: nothing verified, and 核对 says the new entries wait.
      const before = await api.usage.check(range);
      expect(before.data.totals.entries).toBe(0);
      expect(before.data.pending).toBe(true);

      // The pass, before the site's list was ever read: the ratios' verdict only.
      await verify();
      const first = (await api.usage.check(range)).data;
      expect(first.pending).toBe(false);
      expect(first.totals.entries).toBe(consume.length);
      expect(first.totals.checked).toBe(consume.length);
      expect(first.totals.differs).toBe(1);
      expect(first.totals.listChecked).toBe(0);
      // What was charged is the ledger's own consume sum.
      const summary = await api.usage.summary({ ...range, groupBy: "type" });
      const spent = summary.data.rows.find((r) => r.key === "consume")!;
      expect(first.totals.chargedUsd).toBeCloseTo(spent.usd, 6);
      // The expected sum is the charges with the victim at its fair price (the hubs' float
      // ceiling may land one unit above an entry's exact charge, and holds within that).
      const qpu = 500_000;
      const fairTotal = consume.reduce((s, l) => s + l.quota, 0) - victim.quota + fair;
      const slack = hubLike(family) ? consume.length : 0;
      expect(first.totals.expectedUsd * qpu).toBeGreaterThanOrEqual(fairTotal - 0.5);
      expect(first.totals.expectedUsd * qpu).toBeLessThanOrEqual(fairTotal + slack + 0.5);
      expect(first.worst[0]).toMatchObject({ quota: victim.quota, model: victim.model });
      expect(Math.abs(first.worst[0]!.expected! - fair)).toBeLessThanOrEqual(slack ? 1 : 0);

      // The site's list is read now (the list before its first read is taken to be it).
      const pricing = hubLike(family) ? demoPricing("one-hub", { "claude-sonnet-4": 0.8 }) : demoPricing("new-api");
      const prices = parsePrices(hubLike(family) ? "one-hub" : "new-api", pricing, qpu);
      await priceStore(store.db).recordSite(id, { prices, published: true, groupRatios: pricing.groupRatios });
      await verify();
      const second = (await api.usage.check(range)).data;
      expect(second.totals.entries).toBe(consume.length);
      expect(second.totals.listChecked).toBe(consume.length);
      const claude = consume.filter((l) => l.model === "claude-sonnet-4");
      expect(claude.length).toBeGreaterThan(0);
      expect(second.totals.listDiffers).toBe(hubLike(family) ? claude.length : 0);
      const claudeRow = second.rows.find((r) => r.model === "claude-sonnet-4")!;
      if (hubLike(family)) {
        // Billed at $3/$15, listed at $2.40/$12: a fifth less, to the unit (ceil per entry).
        expect(claudeRow.listDiffers).toBe(claude.length);
        // A fifth less than the fair charges (the victim counted at its fair price if it is one).
        const claudeFair =
          claude.reduce((s, l) => s + l.quota, 0) - (claude.includes(victim) ? victim.quota - fair : 0);
        expect(claudeRow.listExpectedUsd * qpu).toBeLessThan(claudeFair * 0.81);
        expect(claudeRow.listExpectedUsd * qpu).toBeGreaterThan(claudeFair * 0.79);
        expect(second.rows[0]!.model).toBe("claude-sonnet-4");
        const flagged = second.worst.find((w) => w.model === "claude-sonnet-4" && w.listExpected !== null)!;
        expect(flagged.note).toContain("$2.40");
      } else {
        expect(claudeRow.listDiffers).toBe(0);
      }
      // 多扣 is the flagged entries' charges above the lower expectation, summed as they are kept.
      const kept = await store.db.ledgerFlag.findMany({ select: { over: true } });
      expect(second.totals.overUsd).toBeCloseTo(kept.reduce((sum, f) => sum + Number(f.over), 0) / qpu, 6);
      expect(second.totals.overUsd).toBeGreaterThan(0);
      // A third pass finds nothing new: nothing counted twice.
      await verify();
      expect((await api.usage.check(range)).data.totals).toEqual(second.totals);

      // The flagged entries as CSV: one row each, both expectations where they differ.
      const csv = await api.export.checkCsv(range);
      const bytes = await streamBytes(csv.data.body as ReadableStream<Uint8Array>);
      const rows: string[][] = parse(new TextDecoder().decode(bytes), { bom: true });
      const flaggedCount = hubLike(family) ? claude.length + (victim.model === "claude-sonnet-4" ? 0 : 1) : 1;
      expect(rows.length - 1).toBe(flaggedCount);
      const victimRow = rows.find((r) => r[7] === String(victim.quota))!;
      expect(Math.abs(Number(victimRow[9]) - fair)).toBeLessThanOrEqual(slack ? 1 : 0);

      // A month's statement has the section: the month's counts, and Claude's row with its flagged
      // entries. The month that holds a day of the two days of entries, whatever day of it today is.
      const month = new Date((NOW - 86_400) * 1000).toISOString().slice(0, 7);
      const monthEnd = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0));
      const inMonth = (
        await api.usage.check({ from: `${month}-01`, to: monthEnd.toISOString().slice(0, 10), tz: "UTC" })
      ).data;
      const monthClaude = inMonth.rows.find((r) => r.model === "claude-sonnet-4")!;
      const pdf = await api.export.statement({ month, tz: "UTC" });
      const dir = mkdtempSync(path.join(tmpdir(), "gd-check-"));
      try {
        const file = path.join(dir, "s.pdf");
        writeFileSync(file, await streamBytes(pdf.data.body as ReadableStream<Uint8Array>));
        const text = execFileSync("pdftotext", ["-layout", file, "-"]).toString();
        expect(text).toContain("核对（扣费与日志倍率、站点价目表）");
        expect(text).toContain(
          `与日志倍率不符 ${inMonth.totals.differs} 条，与价目表不符 ${inMonth.totals.listDiffers} 条`,
        );
        const line = text
          .split("\n")
          .find((l) => l.trimStart().startsWith("claude-sonnet-4") && /\d\s*\/\s*\d/.test(l))!;
        expect(line).toMatch(new RegExp(`\\s${monthClaude.differs}\\s*/\\s*${monthClaude.listDiffers}\\s`));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe("price advice by what each account is actually charged", () => {
  it("marks a hub 核对 finds billing above its list, ranks it by what it bills, and prices usage elsewhere with its cache", async () => {
    // The hub lists Claude a fifth cheaper than its log bills it; new-api lists and bills the same.
    const hub = await startFamilySite("one-hub", 0, {}, { days: 2, now: NOW - 60, callsPerDay: 60 });
    const fair = await startFamilySite("new-api", 1, {}, { days: 2, now: NOW - 60, callsPerDay: 60 });
    open.push(hub, fair);
    let cookie = "";
    const accounts = [];
    for (const [name, site] of [
      ["标价低的站", hub],
      ["如实计费的站", fair],
    ] as const) {
      const { id } = await siteRegistry(store.db).add({ name, url: site.gateway.url });
      const signed = await signInAndSync(store.db, id, site.user, NOW, cookie);
      cookie = signed.cookie;
      accounts.push(signed.account);
    }
    await refreshPrices(store.db, accounts, { db: store.db, timeoutMs: 5000, perMinute: 100_000 });
    await verify();
    const api = callerFor(store.db, { cookie }).api;
    const answer = (await api.prices.cheapest({ model: "claude-sonnet-4", ...range })).data;
    const row = (name: string) => answer.rows.find((r) => r.siteName === name)!;
    // Listed at $2.40 / $12, billed at $3 / $15: marked, ranked by what it bills, not the cheapest.
    expect(row("标价低的站")).toMatchObject({ inputPerMillionUsd: 2.4, overList: true, cheapest: false });
    expect(row("标价低的站").charged?.factor).toBeCloseTo(1.25, 2);
    expect(row("标价低的站").effective).toMatchObject({ basis: "charged" });
    expect(row("标价低的站").effective.inputPerMillionUsd).toBeCloseTo(3, 2);
    expect(row("如实计费的站")).toMatchObject({ overList: false, cheapest: true });
    expect(row("如实计费的站").effective).toMatchObject({ basis: "charged", inputPerMillionUsd: 3 });
    // Charged alike, the same usage costs what it cost: its cache reads included, on either.
    const usage = answer.usage!;
    expect(usage.actualUsd).toBeGreaterThan(0);
    for (const r of answer.rows) expect(r.usageUsd).toBeCloseTo(usage.actualUsd, 3);
    // 如果在别处 says the same, and no saving where none is to be had.
    const what = (await api.prices.whatif(range)).data;
    const claude = what.rows.find((r) => r.model === "claude-sonnet-4")!;
    for (const e of claude.elsewhere) expect(e.usd).toBeCloseTo(claude.actualUsd, 3);
  });
});

describe("overcharged_above", () => {
  it("opens when a saved account was charged above its site's list by more than the threshold in a day", async () => {
    process.env.ALERT_ALLOW_PRIVATE = "1";
    // Enough calls that a weekend's day (a third of a weekday's) is overcharged past the rule's
    // smallest threshold, whatever day the suite runs on.
    const site = await startFamilySite("one-hub", 0, {}, { days: 2, now: NOW - 60, callsPerDay: 200 });
    open.push(site);
    const { id } = await siteRegistry(store.db).add({ name: "便宜站", url: site.gateway.url });
    const { api: anon } = callerFor(store.db, {}, { clientAddress: "198.51.100.42" });
    const registered = await anon.workspace.register({ name: "核对工作区", password: "correct horse battery" });
    const api = callerFor(store.db, bearer(registered.data.token), { ledgerSyncMinutes: 0 }).api;
    const saved = await api.workspace.addAccount({ siteId: id, userId: site.user.id, accessToken: site.user.token });
    if (!saved.success) throw new Error(saved.message);
    const row = await store.db.workspaceAccount.findFirst({
      where: { id: saved.data.account.id },
      select: { sessionId: true },
    });
    const account = accountOf((await sessionStore(store.db).findLiveById(row?.sessionId ?? "", new Date()))!);
    const deps = { db: store.db, timeoutMs: 5000, perMinute: 100_000 };
    await syncLedger(store.db, account, deps, { backfillDays: 3, now: NOW });
    // The site's own list, read from it: Claude at $2.40/$12 while its log bills $3/$15.
    expect((await readSitePrices(store.db, account, deps)).published).toBe(true);
    await verify();
    for (const r of (await api.alerts.rules()).data.rules) await api.alerts.removeRule({ id: r.id });
    const day = site.history.logs.filter(
      (l) => l.type === 2 && l.model === "claude-sonnet-4" && l.createdAt > NOW - 86_400,
    );
    expect(day.length).toBeGreaterThan(0);
    // The figure is the flagged entries' sum above the list, as 核对 shows it for the day: the 24
    // hours before the last evaluation below (a minute after NOW: an entry of the minute 24 hours
    // before NOW has left them).
    const flags = await store.db.ledgerFlag.findMany({ where: { at: { gte: NOW + 60 - 86_400 }, over: { gt: 0 } } });
    const over = flags.reduce((s, f) => s + Number(f.over), 0) / 500_000;
    expect(over).toBeGreaterThan(0.01);
    const high = await api.alerts.createRule({ kind: "overcharged_above", account: "all", threshold: 1000 });
    const rule = await api.alerts.createRule({ kind: "overcharged_above", account: "all", threshold: 0.01 });
    if (!rule.success || !high.success) throw new Error("rules");
    const now = new Date(NOW * 1000);
    await evaluateAlerts(store.db, now);
    await evaluateAlerts(store.db, new Date(now.getTime() + 60_000));
    const opened = (await api.alerts.list({ state: "open" })).data.alerts;
    expect(opened.map((a) => a.rule.id)).toEqual([rule.data.rule.id]);
    expect(opened[0]!.message).toMatch(/^近 24 小时多扣了 \$\d+\.\d{4}（占这段时间消费的 \d+\.\d%）/);
    // The value is written to 4 decimals: within half of the last one.
    expect(Math.abs(opened[0]!.value! - over)).toBeLessThanOrEqual(0.00005 + 1e-12);
  });
});

describe("the cache", () => {
  it("by account: a row each, two accounts of one user name on two sites told apart by site", async () => {
    const sites = [
      await startFamilySite("new-api", 0, {}, { days: 2, now: NOW - 60, callsPerDay: 40 }),
      await startFamilySite("one-hub", 1, {}, { days: 2, now: NOW - 60, callsPerDay: 40 }),
    ];
    open.push(...sites);
    let cookie = "";
    for (const [i, site] of sites.entries()) {
      site.user.data.username = "alice";
      const { id } = await siteRegistry(store.db).add({ name: `同名站 ${i + 1}`, url: site.gateway.url });
      cookie = (await signInAndSync(store.db, id, site.user, NOW, cookie)).cookie;
    }
    await verify();
    const api = callerFor(store.db, { cookie }).api;
    const byAccount = (await api.usage.cache({ ...range, accounts: "all", groupBy: "account" })).data;
    const read = (site: (typeof sites)[number]) =>
      site.history.logs.filter((l) => l.type === 2).reduce((s, l) => s + (l.cache?.read ?? 0), 0);
    expect(byAccount.rows.map((r) => [r.key, r.cacheRead]).sort()).toEqual(
      [
        ["alice（同名站 1）", read(sites[0]!)],
        ["alice（同名站 2）", read(sites[1]!)],
      ].sort(),
    );
  });

  it.each(["new-api", "one-hub", "done-hub", "one-api"] as StandInFamily[])(
    "on %s: reads, writes, hit rate and what it saved reconcile with the log and the ledger's own sums",
    async (family) => {
      const site = await startFamilySite(family, 0, {}, { days: 2, now: NOW - 60, callsPerDay: 40 });
      open.push(site);
      const { id } = await siteRegistry(store.db).add({ name: `站点 ${family}`, url: site.gateway.url });
      const { token } = await signInAndSync(store.db, id, site.user, NOW);
      const api = callerFor(store.db, bearer(token)).api;
      await verify();
      const consume = site.history.logs.filter((l) => l.type === 2);
      // one-api logs no cache (its charges include the discount all the same).
      const logged = family !== "one-api";
      const read = logged ? consume.reduce((s, l) => s + (l.cache?.read ?? 0), 0) : 0;
      const write = logged ? consume.reduce((s, l) => s + (l.cache?.write ?? 0), 0) : 0;
      const saved = logged
        ? consume.reduce((s, l) => s + (l.cache ? l.cache.read * (1 - l.cache.readRatio) * l.ratios!.model : 0), 0)
        : 0;
      const cost = logged
        ? consume.reduce((s, l) => s + (l.cache ? l.cache.write * (l.cache.writeRatio - 1) * l.ratios!.model : 0), 0)
        : 0;
      if (logged) expect(read).toBeGreaterThan(0);
      const byModel = (await api.usage.cache({ ...range, groupBy: "model" })).data;
      expect(byModel.pending).toBe(false);
      expect(byModel.totals.cacheRead).toBe(read);
      expect(byModel.totals.cacheWrite).toBe(write);
      // Every family here counts the cache inside its prompt tokens: the input is the ledger's own sum.
      const summary = (await api.usage.summary({ ...range, groupBy: "model" })).data;
      expect(byModel.totals.inputTokens).toBe(summary.totals.promptTokens);
      expect(byModel.totals.hitRate).toBeCloseTo(read / summary.totals.promptTokens, 4);
      // Saved and cost: each entry rounded to its unit, then summed.
      expect(Math.abs(byModel.totals.savedUsd * 500_000 - saved)).toBeLessThanOrEqual(consume.length / 2 + 1);
      expect(Math.abs(byModel.totals.costUsd * 500_000 - cost)).toBeLessThanOrEqual(consume.length / 2 + 1);
      if (logged) {
        // The model that read the most from the cache comes first (which one depends on the hours the history covers).
        const reads = new Map<string, number>();
        for (const l of consume) reads.set(l.model, (reads.get(l.model) ?? 0) + (l.cache?.read ?? 0));
        expect(reads.get(byModel.rows[0]!.key)).toBe(Math.max(...reads.values()));
      }
      // By day and by token, the same totals.
      for (const groupBy of ["day", "token", "account"] as const) {
        const other = (await api.usage.cache({ ...range, groupBy })).data;
        expect(other.totals).toEqual(byModel.totals);
        expect(other.rows.reduce((s, r) => s + r.cacheRead, 0)).toBe(read);
      }
      // The ledger's CSV carries each entry's cache tokens: their column sums are the same.
      const csv = await api.export.usageCsv(range);
      const rows: string[][] = parse(
        new TextDecoder().decode(await streamBytes(csv.data.body as ReadableStream<Uint8Array>)),
        {
          bom: true,
        },
      );
      const at = (name: string) => rows[0]!.indexOf(name);
      const column = (name: string) => rows.slice(1).reduce((s, r) => s + Number(r[at(name)] || 0), 0);
      expect(column("缓存读取 tokens")).toBe(read);
      expect(column("缓存写入 tokens")).toBe(write);
    },
  );
});

describe("speed", () => {
  it("gives each site's p50 and p90 per model from the ledger's durations, and marks the fastest", async () => {
    const a = await startFamilySite("new-api", 0, {}, { days: 2, now: NOW - 60, callsPerDay: 40 });
    const b = await startFamilySite("one-hub", 1, {}, { days: 2, now: NOW - 60, callsPerDay: 40 });
    open.push(a, b);
    const idA = (await siteRegistry(store.db).add({ name: "站点甲", url: a.gateway.url })).id;
    const idB = (await siteRegistry(store.db).add({ name: "站点乙", url: b.gateway.url })).id;
    const first = await signInAndSync(store.db, idA, a.user, NOW);
    const second = await signInAndSync(store.db, idB, b.user, NOW, first.cookie);
    await verify();
    const { api } = callerFor(store.db, { cookie: second.cookie });
    const speed = (await api.usage.speed({ ...range, accounts: "all" })).data;
    // The same figures from the ledger's own entries, bucketed and read the same way.
    const expected = async (siteId: number, model: string) => {
      const entries = await store.db.ledgerEntry.findMany({
        where: { siteId, model, type: "consume" },
        select: { durationMs: true, detail: true },
      });
      const total = Array<number>(SPEED_BOUNDS.length + 1).fill(0);
      const firsts = Array<number>(SPEED_BOUNDS.length + 1).fill(0);
      for (const e of entries) {
        if (e.durationMs !== null && e.durationMs > 0) total[bucketOf(e.durationMs)]!++;
        const f = firstTokenMs(e.detail ? (JSON.parse(e.detail) as Record<string, number>) : {});
        if (f !== null) firsts[bucketOf(f)]!++;
      }
      return {
        // 请求: every call of the model, as 用量分析 counts them; the timed ones among them.
        requests: entries.length,
        timedRequests: total.reduce((n, c) => n + c, 0),
        firstTokenRequests: firsts.reduce((n, c) => n + c, 0),
        totalP50Ms: quantileMs(total, 0.5),
        totalP90Ms: quantileMs(total, 0.9),
        firstTokenP50Ms: quantileMs(firsts, 0.5),
      };
    };
    expect(speed.rows.length).toBeGreaterThan(6);
    for (const row of speed.rows) {
      expect(row, `${row.site.name} ${row.model}`).toMatchObject(await expected(row.site.id, row.model));
      if (row.totalP50Ms !== null) expect(row.totalP90Ms!).toBeGreaterThanOrEqual(row.totalP50Ms);
    }
    // new-api logs a first-token time (612 ms in the stand-in); one-hub's stand-in none.
    expect(speed.rows.find((r) => r.site.name === "站点甲")!.firstTokenP50Ms).toBeGreaterThan(500);
    expect(speed.rows.find((r) => r.site.name === "站点乙")!.firstTokenP50Ms).toBeNull();
    // Per model, the faster site of the two is marked (new-api logs whole seconds: its calls
    // under half a second have no total time, and a model only one site timed has no fastest).
    let compared = 0;
    for (const model of new Set(speed.rows.map((r) => r.model))) {
      const both = speed.rows.filter((r) => r.model === model && r.totalP50Ms !== null);
      if (both.length < 2) {
        expect(both.every((r) => !r.fastest)).toBe(true);
        continue;
      }
      const [fast, slow] = both;
      expect(fast!.totalP50Ms!).toBeLessThanOrEqual(slow!.totalP50Ms!);
      expect([fast!.fastest, slow!.fastest]).toEqual([true, false]);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(4);
  });
});
