/**
 * 核对 as read (docs/design.md 27): the verifying pass's sums per account and model over a range,
 * the entries charged most above what they should have been, and every flagged entry for the CSV.
 * Sums of whole UTC hours (the day edges of a zone whose midnight is not on the hour fall on the
 * hour before), read from ledger_check_hours whatever the ledger's size.
 */
import type { Db } from "../db/client";
import { dayStart, nextDay } from "../core/time";
import { round6, usdOfQuota } from "../../shared/money";
import type { Reader } from "./analytics";
import { boundOf } from "./owner";
import type { ChargeCheckReport, FlaggedEntry, VerdictSums } from "./check-schemas";
import { progressBehind } from "./check";
import { detailOf } from "./log-view";

export type CheckQuery = { from: string; to: string; tz: string };

const WORST = 10;

const secondsOf = (q: CheckQuery) => ({
  from: dayStart(q.tz, q.from) / 1000,
  to: dayStart(q.tz, nextDay(q.to)) / 1000,
});

const ownersWhere = (readers: Reader[], column: "hour" | "at", from: number, to: number) => ({
  OR: readers.map((r) => ({
    siteId: r.siteId,
    siteUserId: BigInt(r.siteUserId),
    [column]: { gte: column === "hour" ? Math.floor(from / 3600) * 3600 : from, lt: Math.min(to, boundOf(r)) },
  })),
});

export const accountName = (r: Reader) => r.alias ?? (r.username || String(r.userId));

/**
 * Each account's name where rows are keyed by account, told apart where two share one: by their
 * site (`alice（站点 B）`), and by the user id on one site too. Keyed "siteId:siteUserId".
 */
export function accountLabels(readers: Reader[]): Map<string, string> {
  const named = (label: (r: Reader) => string) => {
    const count = new Map<string, number>();
    for (const r of readers) count.set(label(r), (count.get(label(r)) ?? 0) + 1);
    return (r: Reader) => (count.get(label(r)) ?? 0) > 1;
  };
  const shared = named(accountName);
  const withSite = (r: Reader) =>
    shared(r) ? `${accountName(r)}（${r.site?.name ?? "已移除的站点"}）` : accountName(r);
  const stillShared = named(withSite);
  return new Map(
    readers.map((r) => [
      `${r.siteId}:${r.siteUserId}`,
      stillShared(r) ? `${withSite(r).replace(/）$/, "")} · 用户 ${r.userId}）` : withSite(r),
    ]),
  );
}

type Raw = {
  entries: number;
  quota: number;
  checked: number;
  checkedQuota: number;
  expected: number;
  differs: number;
  listChecked: number;
  listQuota: number;
  listExpected: number;
  listDiffers: number;
  over: number;
};

const zero = (): Raw => ({
  ...{ entries: 0, quota: 0, checked: 0, checkedQuota: 0, expected: 0, differs: 0 },
  ...{ listChecked: 0, listQuota: 0, listExpected: 0, listDiffers: 0, over: 0 },
});

const inUsd = (s: Raw, qpu: number): VerdictSums => ({
  entries: s.entries,
  chargedUsd: round6(usdOfQuota(s.quota, qpu)),
  checked: s.checked,
  checkedChargedUsd: round6(usdOfQuota(s.checkedQuota, qpu)),
  expectedUsd: round6(usdOfQuota(s.expected, qpu)),
  differs: s.differs,
  listChecked: s.listChecked,
  listChargedUsd: round6(usdOfQuota(s.listQuota, qpu)),
  listExpectedUsd: round6(usdOfQuota(s.listExpected, qpu)),
  listDiffers: s.listDiffers,
  overUsd: round6(usdOfQuota(s.over, qpu)),
});

const addUsd = (a: VerdictSums, b: VerdictSums): VerdictSums => ({
  entries: a.entries + b.entries,
  chargedUsd: round6(a.chargedUsd + b.chargedUsd),
  checked: a.checked + b.checked,
  checkedChargedUsd: round6(a.checkedChargedUsd + b.checkedChargedUsd),
  expectedUsd: round6(a.expectedUsd + b.expectedUsd),
  differs: a.differs + b.differs,
  listChecked: a.listChecked + b.listChecked,
  listChargedUsd: round6(a.listChargedUsd + b.listChargedUsd),
  listExpectedUsd: round6(a.listExpectedUsd + b.listExpectedUsd),
  listDiffers: a.listDiffers + b.listDiffers,
  overUsd: round6(a.overUsd + b.overUsd),
});

/** What a flag's row gives (FlagRow). */
export const flagSelect = {
  entryId: true,
  siteId: true,
  siteUserId: true,
  at: true,
  model: true,
  quota: true,
  expected: true,
  listExpected: true,
  over: true,
  note: true,
} as const;

type FlagRow = {
  entryId: number;
  siteId: number;
  siteUserId: bigint;
  at: number;
  model: string;
  quota: bigint;
  expected: bigint | null;
  listExpected: bigint | null;
  over: bigint;
  note: string;
};

/** Flags with their entries' tokens, token names and details, as the API shows them. */
export async function flaggedEntries(db: Db, readers: Reader[], flags: FlagRow[]): Promise<FlaggedEntry[]> {
  const entries = await db.ledgerEntry.findMany({
    where: { id: { in: flags.map((f) => f.entryId) } },
    select: { id: true, tokenName: true, promptTokens: true, completionTokens: true, detail: true },
  });
  const byId = new Map(entries.map((e) => [e.id, e]));
  const byOwner = new Map(readers.map((r) => [`${r.siteId}:${r.siteUserId}`, r]));
  return flags.flatMap((f) => {
    const r = byOwner.get(`${f.siteId}:${f.siteUserId}`);
    const e = byId.get(f.entryId);
    if (!r) return [];
    const usd = (q: bigint | null) => (q === null ? null : round6(usdOfQuota(Number(q), r.quotaPerUnit)));
    return [
      {
        key: r.key,
        site: r.site?.name ?? "已移除的站点",
        account: accountName(r),
        at: new Date(f.at * 1000).toISOString(),
        model: f.model,
        tokenName: e?.tokenName ?? "",
        promptTokens: Number(e?.promptTokens ?? 0),
        completionTokens: Number(e?.completionTokens ?? 0),
        quota: Number(f.quota),
        chargedUsd: usd(f.quota) ?? 0,
        expected: f.expected === null ? null : Number(f.expected),
        expectedUsd: usd(f.expected),
        listExpected: f.listExpected === null ? null : Number(f.listExpected),
        listExpectedUsd: usd(f.listExpected),
        overUsd: usd(f.over) ?? 0,
        note: f.note,
        detail: detailOf(e?.detail ?? ""),
      },
    ];
  });
}

/** 核对 over a range: per account and model, the totals, and the worst entries. */
export async function chargeCheck(db: Db, readers: Reader[], q: CheckQuery): Promise<ChargeCheckReport> {
  const { from, to } = secondsOf(q);
  const empty = { from: q.from, to: q.to, tz: q.tz, totals: inUsd(zero(), 1), rows: [], worst: [], pending: false };
  if (readers.length === 0) return empty;
  const [sums, worst, pending] = await Promise.all([
    db.ledgerCheckHour.groupBy({
      by: ["siteId", "siteUserId", "model"],
      where: ownersWhere(readers, "hour", from, to),
      _sum: {
        entries: true,
        quota: true,
        checked: true,
        checkedQuota: true,
        expected: true,
        differs: true,
        listChecked: true,
        listQuota: true,
        listExpected: true,
        listDiffers: true,
        over: true,
      },
    }),
    db.ledgerFlag.findMany({
      where: ownersWhere(readers, "at", from, to),
      orderBy: { over: "desc" },
      take: WORST,
      select: flagSelect,
    }),
    progressBehind(db),
  ]);
  const byOwner = new Map(readers.map((r) => [`${r.siteId}:${r.siteUserId}`, r]));
  const rows = sums.flatMap((s) => {
    const r = byOwner.get(`${s.siteId}:${s.siteUserId}`);
    if (!r) return [];
    const n = (v: bigint | number | null | undefined) => Number(v ?? 0);
    const raw: Raw = {
      entries: n(s._sum.entries),
      quota: n(s._sum.quota),
      checked: n(s._sum.checked),
      checkedQuota: n(s._sum.checkedQuota),
      expected: n(s._sum.expected),
      differs: n(s._sum.differs),
      listChecked: n(s._sum.listChecked),
      listQuota: n(s._sum.listQuota),
      listExpected: n(s._sum.listExpected),
      listDiffers: n(s._sum.listDiffers),
      over: n(s._sum.over),
    };
    return [
      {
        key: r.key,
        site: r.site?.name ?? "已移除的站点",
        account: accountName(r),
        model: s.model,
        ...inUsd(raw, r.quotaPerUnit),
      },
    ];
  });
  const weight = (x: VerdictSums) => x.differs + x.listDiffers;
  rows.sort((a, b) => weight(b) - weight(a) || b.overUsd - a.overUsd || b.chargedUsd - a.chargedUsd);
  const totals = rows.reduce<VerdictSums>((t, row) => addUsd(t, row), empty.totals);
  return { ...empty, totals, rows, worst: await flaggedEntries(db, readers, worst), pending };
}

/**
 * Each account's overcharge since `since` (Unix seconds), keyed "siteId:siteUserId": the charges
 * above the lower expectation of the entries flagged (quota units), and the spend verified then.
 * What the alerts' overcharged_above rule reads.
 */
export async function overchargesSince(
  db: Db,
  owners: Array<{ siteId: number; siteUserId: number; until?: number }>,
  since: number,
): Promise<Map<string, { over: number; spent: number }>> {
  const out = new Map<string, { over: number; spent: number }>();
  if (owners.length === 0) return out;
  const where = (column: "hour" | "at") => ({
    OR: owners.map((o) => ({
      siteId: o.siteId,
      siteUserId: BigInt(o.siteUserId),
      [column]: { gte: column === "hour" ? Math.floor(since / 3600) * 3600 : since, lt: boundOf(o) },
    })),
  });
  const [flags, spent] = await Promise.all([
    db.ledgerFlag.groupBy({
      by: ["siteId", "siteUserId"],
      where: { ...where("at"), over: { gt: 0 } },
      _sum: { over: true },
    }),
    db.ledgerCheckHour.groupBy({ by: ["siteId", "siteUserId"], where: where("hour"), _sum: { quota: true } }),
  ]);
  for (const s of spent) out.set(`${s.siteId}:${s.siteUserId}`, { over: 0, spent: Number(s._sum.quota ?? 0) });
  for (const f of flags) {
    const key = `${f.siteId}:${f.siteUserId}`;
    out.set(key, { over: Number(f._sum.over ?? 0), spent: out.get(key)?.spent ?? 0 });
  }
  return out;
}
