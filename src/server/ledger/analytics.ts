/**
 * Analytics from the usage ledger (docs/design.md 13): spend, requests and tokens by day, model, token
 * or type, and the balance over time with the burn rate. Read from the hourly totals, so a month
 * of a busy account is a few thousand rows; days are calendar days in the asked time zone (zones
 * a whole number of hours from UTC split exactly; others at the hour).
 */
import type { Db } from "../db/client";
import { boundOf, ledgerStore, ownerWhere, type Hourly, type Owner, type Sums } from "./store";
import { UNPROBED, type Money } from "../gateway/families";
import type { LiveSession } from "../session/store";
import { siteRegistry } from "../sites/registry";
import { listed } from "../accounts/browser-accounts";
import type { AccountBalance, BalancePoint, BalanceReport, LedgerCoverage, UsageRow, UsageSummary } from "./schemas";

export type { BalanceReport, LedgerCoverage, UsageSummary } from "./schemas";
import { dayIn, dayStart, dayStarts, nextDay, offsetAt } from "../core/time";
import { reconcile } from "./reconcile";
import { round6 } from "../../shared/money";
import { namedApart } from "./site-names";
import { daysLeftWith, storedPlans } from "./plans";
import { ownerOfSession } from "./owner";

export type GroupBy = "day" | "hour" | "model" | "token" | "type";

/** One account whose ledger is read: a live session of it, and its site's money settings. */
export type Reader = Owner & {
  key: string;
  /** The live session that gives access to this ledger. */
  sessionId: string;
  site: { id: number; name: string } | null;
  userId: number;
  username: string;
  /** The workspace's name for the account, where it gave one. */
  alias: string | null;
  quotaPerUnit: number;
  money: Money;
};

const iso = (s: number | null | undefined) => (s === null || s === undefined ? null : new Date(s * 1000).toISOString());

/**
 * The accounts behind the sessions, each once, with their sites' money settings; two sites of one
 * name told apart (ledger/site-names.ts).
 */
export async function readersOf(db: Db, sessions: LiveSession[]): Promise<Reader[]> {
  const seen = new Set<string>();
  const readers: Reader[] = [];
  const registry = siteRegistry(db);
  for (const session of sessions) {
    const id = `${session.siteId}:${session.siteUserId}`;
    if (seen.has(id)) continue;
    seen.add(id);
    const account = listed(session, false);
    const site = await registry.profiled(session.siteId);
    readers.push({
      // A reader that no longer holds the account reads what it held, nothing after (docs/design.md 24).
      ...ownerOfSession(session),
      key: account.key,
      sessionId: session.id,
      site: account.site ? { id: account.site.id, name: account.site.name } : null,
      userId: account.userId,
      username: account.username || account.displayName,
      alias: session.alias ?? null,
      quotaPerUnit: site?.money.quotaPerUnit ?? UNPROBED.money.quotaPerUnit,
      money: site?.money ?? UNPROBED.money,
    });
  }
  return namedApart(readers, sessions);
}

/** The balance the account's last sync noted, in its site's units and USD, with its time; null before any. */
export async function lastBalanceOf(
  db: Db,
  session: LiveSession,
): Promise<{ quota: number; usd: number; at: string } | null> {
  const [reader] = await readersOf(db, [session]);
  if (!reader) return null;
  const last = await db.balanceSnapshot.findFirst({
    where: ownerWhere(reader),
    orderBy: { at: "desc" },
    select: { at: true, quota: true },
  });
  if (!last) return null;
  const quota = Number(last.quota);
  return { quota, usd: round6(quota / reader.quotaPerUnit), at: new Date(last.at * 1000).toISOString() };
}

export async function coverageOf(db: Db, readers: Reader[]): Promise<LedgerCoverage[]> {
  const states = await db.ledgerSync.findMany({
    where: { OR: readers.map((r) => ({ siteId: r.siteId, siteUserId: BigInt(r.siteUserId) })) },
    select: { siteId: true, siteUserId: true, oldest: true, newest: true, syncedAt: true },
  });
  return readers.map((r) => {
    const state = states.find((s) => s.siteId === r.siteId && Number(s.siteUserId) === r.siteUserId);
    const last = boundOf(r) - 1;
    const clamp = (at: number | null | undefined) => (at === null || at === undefined ? at : Math.min(at, last));
    return {
      key: r.key,
      site: r.site,
      userId: r.userId,
      username: r.username,
      alias: r.alias,
      oldest: iso(clamp(state?.oldest)),
      newest: iso(clamp(state?.newest)),
      syncedAt: state?.syncedAt?.toISOString() ?? null,
    };
  });
}

const zero = (): Sums & { usd: number } => ({ requests: 0, quota: 0, usd: 0, promptTokens: 0, completionTokens: 0 });

function add(into: Sums & { usd: number }, s: Sums, usd: number) {
  into.requests += s.requests;
  into.quota += s.quota;
  into.usd += usd;
  into.promptTokens += s.promptTokens;
  into.completionTokens += s.completionTokens;
}

/** The calendar days from..to (inclusive) in tz, each with its start and end (Unix seconds). */
function daysOf(tz: string, from: string, to: string) {
  const starts = dayStarts(tz, from, to);
  return starts.slice(0, -1).map((d, i) => ({
    day: d.day,
    start: d.start / 1000,
    end: (starts[i + 1] as { start: number }).start / 1000,
  }));
}

/**
 * The hours of those days on tz's clock, keyed `YYYY-MM-DD HH:00` (a day of a clock change has 23
 * or 25; an hour the clock repeats is one key). In a zone off the whole hour they start off it too.
 */
function hoursOf(tz: string, days: Array<{ start: number; end: number }>) {
  const out: Array<{ day: string; start: number; end: number }> = [];
  for (const d of days) {
    for (let at = d.start; at < d.end; at += 3600) {
      const local = new Date((at + offsetAt(tz, at * 1000) / 1000) * 1000).toISOString();
      out.push({ day: `${local.slice(0, 10)} ${local.slice(11, 13)}:00`, start: at, end: Math.min(at + 3600, d.end) });
    }
  }
  return out;
}

/**
 * Spend, requests and tokens over the calendar days from..to in tz, grouped by day (every day of
 * the range, empty ones too), model, token or type. Every group but `type` counts consume entries
 * (the spend, as the sites' own statistics count it). `split: "model"` adds each day's USD per model.
 */
export async function usageSummary(
  db: Db,
  sessions: LiveSession[],
  q: { from: string; to: string; tz: string; groupBy: GroupBy; split?: "model" },
): Promise<UsageSummary> {
  return summaryOf(db, await readersOf(db, sessions), q);
}

const negated = (s: Sums): Sums => ({
  requests: -s.requests,
  quota: -s.quota,
  promptTokens: -s.promptTokens,
  completionTokens: -s.completionTokens,
});

/**
 * The edges of the range's days that fall inside an hour (a zone whose midnight is not on the
 * hour, such as +05:30): the hourly totals put such an hour wholly on one side, so the entries of
 * the part after the edge, up to the hour's end, are moved across. `index` is the day that starts
 * at the edge (days.length for the range's end).
 */
function edgesInsideHours(days: Array<{ start: number; end: number }>) {
  const edges = [...days.map((d, index) => ({ at: d.start, index })), { at: days.at(-1)!.end, index: days.length }];
  return edges.filter((e) => e.at % 3600 !== 0).map((e) => ({ ...e, hourEnd: e.at - (e.at % 3600) + 3600 }));
}

/** usageSummary for accounts already resolved (the statement reads each account on its own). */
export async function summaryOf(
  db: Db,
  readers: Reader[],
  q: { from: string; to: string; tz: string; groupBy: GroupBy; split?: "model" },
): Promise<UsageSummary> {
  // By hour, the hours are what the days are by day: every one a row, edges inside hours moved across.
  const calendar = daysOf(q.tz, q.from, q.to);
  const days = q.groupBy === "hour" ? hoursOf(q.tz, calendar) : calendar;
  const periodic = q.groupBy === "day" || q.groupBy === "hour";
  const range = {
    from: (days[0] as { start: number }).start,
    to: (days[days.length - 1] as { end: number }).end,
    consumeOnly: q.groupBy !== "type",
  };
  const store = ledgerStore(db);
  const totals = zero();
  const rows = new Map<string, UsageRow>();
  const rowOf = (key: string) => {
    let row = rows.get(key);
    if (!row) {
      row = { key, ...zero() };
      rows.set(key, row);
    }
    return row;
  };
  if (periodic) for (const d of days) rowOf(d.day);
  const edges = edgesInsideHours(days);
  const edgeAt = new Map(edges.map((e) => [e.hourEnd - 3600, e]));
  const windowsOf = (list: typeof edges) => list.map((e) => ({ from: e.at, to: e.hourEnd }));
  await Promise.all(
    readers.map(async (r) => {
      /** Adds sums (taken away when sign is -1) to a row and the totals, and to the row's split under splitKey. */
      const put = (row: UsageRow, s: Sums, sign: 1 | -1, splitKey?: string) => {
        const sums = sign === 1 ? s : negated(s);
        const spent = sums.quota / r.quotaPerUnit;
        add(row, sums, spent);
        add(totals, sums, spent);
        if (splitKey !== undefined) {
          row.split ??= {};
          row.split[splitKey] = (row.split[splitKey] ?? 0) + spent;
        }
      };
      if (!periodic) {
        for (const g of await store.grouped([r], range, q.groupBy as Exclude<GroupBy, "day" | "hour">)) {
          put(rowOf(g.key), g, 1);
        }
        // The hourly totals start at the first whole hour and end with the hour the range ends in.
        const ends = edges.filter((e) => e.index === 0 || e.index === days.length);
        const by = q.groupBy as Exclude<GroupBy, "day" | "hour">;
        for (const g of await store.entrySums([r], windowsOf(ends), range.consumeOnly, by)) {
          put(rowOf(g.key), g, edgeAt.get(g.hour)!.index === 0 ? 1 : -1);
        }
        return;
      }
      const hours: Array<Hourly & { key?: string }> = q.split
        ? await store.hourlyBy([r], range, q.split)
        : await store.hourly([r], range);
      let i = 0;
      for (const h of hours) {
        while (i < days.length - 1 && h.hour >= (days[i] as { end: number }).end) i++;
        put(rowOf((days[i] as { day: string }).day), h, 1, h.key);
      }
      for (const s of await store.entrySums([r], windowsOf(edges), range.consumeOnly, q.split ?? null)) {
        const e = edgeAt.get(s.hour)!;
        const splitKey = q.split ? s.key : undefined;
        // Out of the day the hour was counted in, into the day that starts at the edge.
        if (e.index > 0) put(rowOf((days[e.index - 1] as { day: string }).day), s, -1, splitKey);
        if (e.index < days.length) put(rowOf((days[e.index] as { day: string }).day), s, 1, splitKey);
      }
    }),
  );
  // A group the edges took everything from is no group.
  if (!periodic) for (const [key, row] of rows) if (row.requests === 0 && row.quota === 0) rows.delete(key);
  const ordered = [...rows.values()].map((r) => ({
    ...r,
    usd: round6(r.usd),
    ...(r.split ? { split: Object.fromEntries(Object.entries(r.split).map(([k, v]) => [k, round6(v)])) } : {}),
  }));
  if (periodic) {
    ordered.sort((a, b) => (a.key < b.key ? -1 : 1));
    if (q.split) for (const r of ordered) r.split ??= {};
  } else {
    ordered.sort((a, b) => b.usd - a.usd || b.requests - a.requests || (a.key < b.key ? -1 : 1));
  }
  return {
    from: q.from,
    to: q.to,
    tz: q.tz,
    groupBy: q.groupBy,
    rows: ordered,
    totals: { ...totals, usd: round6(totals.usd) },
    accounts: await coverageOf(db, readers),
  };
}

const BURN_DAYS = 7;

/**
 * An account's spend a day (quota) over the last 7 × 24 whole hours, the current one included (the
 * ledger sums by the hour): the pace 可用天数 is read at.
 */
export async function weekPace(db: Db, owner: Owner, nowSeconds: number): Promise<number> {
  const to = nowSeconds - (nowSeconds % 3600) + 3600;
  const spent = await ledgerStore(db).hourly([owner], { from: to - BURN_DAYS * 86_400, to, consumeOnly: true });
  return spent.reduce((sum, h) => sum + h.quota, 0) / BURN_DAYS;
}

const daysLeftOf = (balance: number | null, burn: number) =>
  balance === null || burn <= 0 ? null : Math.round((balance / burn) * 10) / 10;

/** The balance series of each account over the days from..to in tz, the burn rate and the days left. */
export async function usageBalance(
  db: Db,
  sessions: LiveSession[],
  q: { from: string; to: string; tz: string },
  now = Date.now(),
): Promise<BalanceReport> {
  const readers = await readersOf(db, sessions);
  const coverage = await coverageOf(db, readers);
  const from = dayStart(q.tz, q.from) / 1000;
  const to = dayStart(q.tz, nextDay(q.to)) / 1000;
  const nowSeconds = Math.floor(now / 1000);
  // Plans pay before, after or instead of the wallet: 可用天数 folds them in (docs/design.md 27).
  const plans = await storedPlans(db, readers);
  const accounts = await Promise.all(
    readers.map(async (r, i): Promise<AccountBalance> => {
      const usd = (quota: number) => round6(quota / r.quotaPerUnit);
      const [snapshots, latest, burn, reconciled] = await Promise.all([
        db.balanceSnapshot.findMany({
          where: ownerWhere(r, { gte: from, lt: to }),
          orderBy: { at: "asc" },
          select: { at: true, quota: true },
        }),
        db.balanceSnapshot.findFirst({ where: ownerWhere(r), orderBy: { at: "desc" }, select: { quota: true } }),
        weekPace(db, r, nowSeconds),
        reconcile(db, r, q),
      ]);
      // The days whose balance moved otherwise than the log says (对账), marked on the chart.
      const unmatched = new Map(reconciled.filter((d) => d.flagged).map((d) => [d.day, usd(d.difference ?? 0)]));
      const byDay = new Map<string, BalancePoint>();
      for (const s of snapshots) {
        const day = dayIn(q.tz, s.at * 1000);
        byDay.set(day, {
          day,
          at: new Date(s.at * 1000).toISOString(),
          quota: Number(s.quota),
          usd: usd(Number(s.quota)),
          unmatchedUsd: unmatched.get(day) ?? null,
        });
      }
      const burnRateUsd = round6(usd(burn));
      const balanceUsd = latest ? usd(Number(latest.quota)) : null;
      return {
        ...(coverage[i] as LedgerCoverage),
        series: [...byDay.values()],
        balanceUsd,
        burnRateUsd,
        daysLeft: daysLeftWith(
          plans.get(`${r.siteId}:${r.siteUserId}`),
          latest ? Number(latest.quota) : null,
          burn,
          nowSeconds,
        ),
      };
    }),
  );
  const balanceUsd = round6(accounts.reduce((s, a) => s + (a.balanceUsd ?? 0), 0));
  const burnRateUsd = round6(accounts.reduce((s, a) => s + a.burnRateUsd, 0));
  // Together: the wallets over what they spend a day, a plan-paid account's at the pace its days left say.
  const walletBurn = accounts.reduce(
    (s, a) => s + (a.balanceUsd !== null && a.daysLeft ? a.balanceUsd / a.daysLeft : a.burnRateUsd),
    0,
  );
  return {
    from: q.from,
    to: q.to,
    tz: q.tz,
    accounts,
    totals: {
      balanceUsd,
      burnRateUsd,
      daysLeft: daysLeftOf(accounts.some((a) => a.balanceUsd !== null) ? balanceUsd : null, walletBurn),
    },
  };
}

/** The balance (quota units) the account's last sync noted; null before any. */
export async function lastQuotaOf(db: Db, owner: Owner): Promise<number | null> {
  const last = await db.balanceSnapshot.findFirst({
    where: ownerWhere(owner),
    orderBy: { at: "desc" },
    select: { quota: true },
  });
  return last ? Number(last.quota) : null;
}

/** A balance the site reported at a sync: when, and how much (quota units). */
export type BalanceAt = { at: number; quota: number };

/** The last balance noted at or before `start`, and the last one noted inside [start, end). */
export async function openingAndClosing(
  db: Db,
  owner: Owner,
  start: number,
  end: number,
): Promise<{ opening: BalanceAt | null; closing: BalanceAt | null }> {
  const select = { at: true, quota: true } as const;
  const [before, last] = await Promise.all([
    db.balanceSnapshot.findFirst({ where: ownerWhere(owner, { lte: start }), orderBy: { at: "desc" }, select }),
    db.balanceSnapshot.findFirst({ where: ownerWhere(owner, { gt: start, lt: end }), orderBy: { at: "desc" }, select }),
  ]);
  const of = (s: { at: number; quota: bigint } | null) => (s ? { at: s.at, quota: Number(s.quota) } : null);
  return { opening: of(before), closing: of(last) };
}

/** The top-up entries in [start, end), oldest first, at most `take`. */
export async function topupsIn(db: Db, owner: Owner, start: number, end: number, take: number) {
  const rows = await db.ledgerEntry.findMany({
    where: { ...ownerWhere(owner, { gte: start, lt: end }), type: "topup" },
    orderBy: { at: "asc" },
    select: { at: true, quota: true, content: true },
    take,
  });
  return rows.map((r) => ({ at: r.at, quota: Number(r.quota), content: r.content }));
}
