/**
 * Prices across a person's accounts (docs/design.md 22): a model's price for each account's own group
 * (the cheapest usable one marked), a model's history, and an account's side with the cheapest
 * other account for each model it used (如果在别处 is whatif.ts). Sites' lists not read within the
 * hour and accounts' sides not read within the day are read first.
 */
import pLimit from "p-limit";
import type { Db } from "../db/client";
import { summaryOf, type Reader } from "../ledger/analytics";
import { chargedOverList, type ChargedOverList } from "../ledger/price-facts";
import { accountPrice, costElsewhere, effectiveOf, OVER_LIST, rankOf, usableBy, type Effective } from "./account-price";
import { SiteDataError, type Account, type SiteDataDeps } from "../site-data/calls";
import { readAccountPrices, readSitePrices } from "./read";
import { ACCOUNT_PRICES_TTL_MS, priceStore, SITE_PRICES_TTL_MS, type AccountSide, type StoredPrice } from "./store";
import { round6 } from "../../shared/money";

/** An account the prices are for: its ledger reader and the account its site is read as. */
export type PricedAccount = { reader: Reader; account: Account };

export type PriceRow = {
  siteId: number;
  siteName: string;
  accountId: string;
  model: string;
  group: string | null;
  groupRatio: number | null;
  inputPerMillionUsd: number | null;
  outputPerMillionUsd: number | null;
  perCallUsd: number | null;
  derivedFromLogs: boolean;
  /** 核对 on the account's entries of the model: charged ÷ the list's charge (null: none checked). */
  charged: ChargedOverList | null;
  /** 核对 found the account charged above the site's list for the model. */
  overList: boolean;
  /** What the account is actually charged: the list times 核对's factor where it has one; ranked by. */
  effective: Effective;
  usable: boolean;
  cheapest: boolean;
};

/** The days of entries 核对's factor is taken over. */
const CHARGED_DAYS = 30;

/** Sites' lists, then accounts' sides, read at once (the sites' gates pace each site). */
const READS_AT_ONCE = 16;

/** Background work's turn beside live requests before each read (core/live-load.ts); none: at once. */
type Turn = () => Promise<void>;

/**
 * Reads the lists of these accounts' sites, each through the first of its accounts the site
 * answers, 16 sites at once, each after `turn`. A site that cannot be read keeps its last list.
 * Returns the sites read.
 */
export async function readSiteLists(
  db: Db,
  accounts: Account[],
  deps: SiteDataDeps,
  now = new Date(),
  turn?: Turn,
): Promise<number> {
  const limit = pLimit(READS_AT_ONCE);
  const bySite = new Map<number, Account[]>();
  for (const a of accounts) {
    const ofSite = bySite.get(a.siteId);
    if (ofSite) ofSite.push(a);
    else bySite.set(a.siteId, [a]);
  }
  let read = 0;
  await Promise.all(
    [...bySite.values()].map((ofSite) =>
      limit(async () => {
        await turn?.();
        for (const a of ofSite) {
          try {
            await readSitePrices(db, a, deps, now);
            read++;
            return;
          } catch (error) {
            if (!(error instanceof SiteDataError)) throw error;
          }
        }
      }),
    ),
  );
  return read;
}

/**
 * Reads what is out of date: each site's list an hour old (through the first of its accounts),
 * then each account's side a day old (its group follows the ledger's syncs). Where they are `due`
 * (the price pass claimed them by their due time): every account's side, and only the lists of
 * sites never read (the others are the hourly queue's, which another pass may be reading now). A
 * site that cannot be read keeps its last list; the failure is said on the account. Each read
 * waits for `turn` first (the background pass's share beside live requests).
 */
export async function refreshPrices(
  db: Db,
  accounts: Account[],
  deps: SiteDataDeps,
  now = new Date(),
  opts: { due?: boolean; turn?: Turn } = {},
): Promise<{ sites: number; accounts: number }> {
  const store = priceStore(db);
  const older = (at: Date | undefined, ttl: number) => !at || now.getTime() - at.getTime() >= ttl;
  const reads = await store.siteReads([...new Set(accounts.map((a) => a.siteId))]);
  const sides = opts.due ? new Map<string, AccountSide>() : await store.accounts(accounts);
  const listDue = (siteId: number) => {
    const at = reads.get(siteId)?.readAt;
    return opts.due ? !at : older(at, SITE_PRICES_TTL_MS);
  };
  const sites = await readSiteLists(
    db,
    accounts.filter((a) => listDue(a.siteId)),
    deps,
    now,
    opts.turn,
  );
  const due = opts.due
    ? accounts
    : accounts.filter((a) => older(sides.get(`${a.siteId}:${a.siteUserId}`)?.readAt, ACCOUNT_PRICES_TTL_MS));
  const limit = pLimit(READS_AT_ONCE);
  await Promise.all(
    due.map((a) =>
      limit(async () => {
        await opts.turn?.();
        await readAccountPrices(db, a, deps, now).catch((error: unknown) => {
          if (!(error instanceof SiteDataError)) throw error;
        });
      }),
    ),
  );
  return { sites, accounts: due.length };
}

/** Everything the figures need, read once: each site's list and each account's side. */
export async function pricesOf(db: Db, accounts: PricedAccount[], now = Date.now()) {
  const store = priceStore(db);
  const siteIds = [...new Set(accounts.map((a) => a.reader.siteId))];
  const readers = accounts.map((a) => a.reader);
  const [lists, sides, charged] = await Promise.all([
    store.sitePrices(siteIds),
    store.accounts(readers),
    chargedOverList(db, readers, Math.floor(now / 1000) - CHARGED_DAYS * 86_400),
  ]);
  const byModel = new Map<number, Map<string, StoredPrice>>();
  for (const [siteId, list] of lists) byModel.set(siteId, new Map(list.map((p) => [p.model, p])));
  return {
    side: (a: PricedAccount) => sides.get(`${a.reader.siteId}:${a.reader.siteUserId}`) ?? null,
    published: (a: PricedAccount, model: string) => byModel.get(a.reader.siteId)?.get(model) ?? null,
    models: (a: PricedAccount) => [...(byModel.get(a.reader.siteId)?.keys() ?? [])],
    charged: (a: PricedAccount, model: string) =>
      charged.get(`${a.reader.siteId}:${a.reader.siteUserId}\n${model}`) ?? null,
  };
}

type Prices = Awaited<ReturnType<typeof pricesOf>>;

type Cell = Omit<PriceRow, "siteId" | "siteName" | "model" | "group">;

/** An account's cell for a model: its price and whether it may use it; null when it neither sees nor prices it. */
function cellOf(p: Prices, a: PricedAccount, model: string): Cell | null {
  const published = p.published(a, model);
  const side = p.side(a);
  const price = accountPrice(published, side, model);
  const usable = usableBy(published, side, model, price !== null);
  if (!price && !usable) return null;
  const charged = price && !price.derivedFromLogs ? p.charged(a, model) : null;
  const none = { inputPerMillionUsd: null, outputPerMillionUsd: null, perCallUsd: null, derivedFromLogs: false };
  return {
    accountId: a.reader.key,
    groupRatio: price?.derivedFromLogs ? null : (side?.groupRatio ?? null),
    inputPerMillionUsd: price?.inputPerMillionUsd ?? null,
    outputPerMillionUsd: price?.outputPerMillionUsd ?? null,
    perCallUsd: price?.perCallUsd ?? null,
    derivedFromLogs: price?.derivedFromLogs ?? false,
    charged,
    overList: charged !== null && charged.factor > OVER_LIST,
    effective: effectiveOf(price ?? none, charged),
    usable,
    cheapest: false,
  };
}

/** Marks the cheapest usable cells by what each is actually charged (ties all of them). */
function markCheapest(cells: Array<Cell | null>): void {
  const ranked = cells.filter((c): c is Cell => c !== null && c.usable && rankOf(c.effective) !== null);
  const best = Math.min(...ranked.map((c) => rankOf(c.effective) as number));
  // Prices within the entries' rounding of each other (核对's factor of 1.2499 for a quarter more) are one price.
  const tied = ranked.filter((c) => (rankOf(c.effective) as number) <= best * OVER_LIST + 1e-12);
  // Of accounts charged alike, one 核对 found charging above its list is not the one to go to.
  const fair = tied.some((c) => !c.overList) ? tied.filter((c) => !c.overList) : tied;
  for (const c of fair) c.cheapest = true;
}

export async function compareModel(db: Db, accounts: PricedAccount[], model: string): Promise<PriceRow[]> {
  const p = await pricesOf(db, accounts);
  const rows: PriceRow[] = accounts.flatMap((a) => {
    const cell = cellOf(p, a, model);
    if (!cell) return [];
    const group = p.side(a)?.group || null;
    return [{ siteId: a.reader.siteId, siteName: a.reader.site?.name ?? "已移除的站点", model, group, ...cell }];
  });
  markCheapest(rows);
  // The usable ones first, cheapest (as charged) first; then the rest.
  return rows.sort(
    (x, y) =>
      Number(y.usable) - Number(x.usable) ||
      (rankOf(x.effective) ?? Infinity) - (rankOf(y.effective) ?? Infinity) ||
      x.siteName.localeCompare(y.siteName),
  );
}

export type PriceTable = {
  accounts: Array<{
    accountId: string;
    siteId: number;
    siteName: string;
    name: string;
    group: string | null;
    error: string | null;
  }>;
  models: Array<{
    model: string;
    cells: Array<Omit<PriceRow, "siteId" | "siteName" | "model" | "group"> | null>;
  }>;
};

/**
 * Every model across the accounts (published by their sites, usable by them, or fitted from their
 * logs), with each account's price in the order of `accounts`: null where the account neither
 * sees nor prices it. The cheapest usable cell of each model is marked.
 */
/** Every model the accounts' sites publish, the accounts may use, or their logs price. */
function modelNames(p: Prices, accounts: PricedAccount[]): string[] {
  const names = new Set<string>();
  for (const a of accounts) {
    for (const m of p.models(a)) names.add(m);
    const side = p.side(a);
    for (const m of side?.models ?? []) names.add(m);
    for (const d of side?.derived ?? []) names.add(d.model);
  }
  return [...names].sort();
}

/** The known models whose names hold `text` (any case), at most `max`: what a name asked for may have meant. */
export async function modelsLike(db: Db, accounts: PricedAccount[], text: string, max = 20): Promise<string[]> {
  const needle = text.trim().toLowerCase();
  const names = modelNames(await pricesOf(db, accounts), accounts);
  return names.filter((m) => m.toLowerCase().includes(needle)).slice(0, max);
}

export async function priceTable(db: Db, accounts: PricedAccount[]): Promise<PriceTable> {
  const p = await pricesOf(db, accounts);
  const models = modelNames(p, accounts).map((model) => {
    const cells = accounts.map((a) => cellOf(p, a, model));
    markCheapest(cells);
    return { model, cells };
  });
  return {
    accounts: accounts.map((a) => ({
      accountId: a.reader.key,
      siteId: a.reader.siteId,
      siteName: a.reader.site?.name ?? "已移除的站点",
      name: a.reader.username || String(a.reader.userId),
      group: p.side(a)?.group || null,
      error: p.side(a)?.error ?? null,
    })),
    models,
  };
}

export type PriceHistory = Array<{
  siteId: number;
  siteName: string;
  points: Array<{
    at: string;
    inputPerMillionUsd: number | null;
    outputPerMillionUsd: number | null;
    perCallUsd: number | null;
  }>;
}>;

/** A model's list price (group ratio 1) on each of the accounts' sites, every change with its time. */
export async function priceHistory(db: Db, accounts: PricedAccount[], model: string): Promise<PriceHistory> {
  const sites = new Map(accounts.map((a) => [a.reader.siteId, a.reader.site?.name ?? "已移除的站点"]));
  const changes = await priceStore(db).histories([...sites.keys()], [model]);
  return [...sites.entries()]
    .map(([siteId, siteName]) => ({
      siteId,
      siteName,
      points: changes
        .filter((c) => c.siteId === siteId)
        .map((c) => ({
          at: c.at.toISOString(),
          inputPerMillionUsd: c.inputPerM,
          outputPerMillionUsd: c.outputPerM,
          perCallUsd: c.perCall,
        })),
    }))
    .filter((s) => s.points.length > 0);
}

export type AccountView = {
  accountId: string;
  siteName: string;
  group: string | null;
  groupRatio: number | null;
  models: string[];
  readAt: string | null;
  error: string | null;
  used: Array<{
    model: string;
    actualUsd: number;
    own: Pick<PriceRow, "inputPerMillionUsd" | "outputPerMillionUsd" | "perCallUsd" | "derivedFromLogs"> | null;
    cheapest: {
      siteName: string;
      accountId: string;
      price: Pick<PriceRow, "inputPerMillionUsd" | "outputPerMillionUsd" | "perCallUsd" | "derivedFromLogs">;
      usd: number | null;
    } | null;
  }>;
};

/**
 * One account's side (its group, ratio and usable models) and, for each model it used in the
 * range, its own price and the cheapest other account offering the model, with what its usage
 * would have cost there.
 */
export async function accountView(
  db: Db,
  accounts: PricedAccount[],
  self: PricedAccount,
  q: { from: string; to: string; tz: string },
): Promise<AccountView> {
  const p = await pricesOf(db, accounts);
  const side = p.side(self);
  const used = await summaryOf(db, [self.reader], { ...q, groupBy: "model" });
  const others = accounts.filter((a) => a.reader.key !== self.reader.key);
  return {
    accountId: self.reader.key,
    siteName: self.reader.site?.name ?? "已移除的站点",
    group: side?.group || null,
    groupRatio: side?.groupRatio ?? null,
    models: side?.models ?? [],
    readAt: side?.readAt.toISOString() ?? null,
    error: side?.error ?? null,
    used: used.rows
      .filter((u) => u.key)
      .map((u) => {
        const own = accountPrice(p.published(self, u.key), side, u.key);
        const ownEffective = own && effectiveOf(own, p.charged(self, u.key));
        const offers = others.flatMap((a) => {
          const published = p.published(a, u.key);
          const theirs = p.side(a);
          const price = accountPrice(published, theirs, u.key);
          if (!price || !usableBy(published, theirs, u.key, true)) return [];
          const effective = effectiveOf(price, p.charged(a, u.key));
          return rankOf(effective) === null ? [] : [{ a, price, effective }];
        });
        offers.sort((x, y) => (rankOf(x.effective) as number) - (rankOf(y.effective) as number));
        const best = offers[0];
        const usd = best ? costElsewhere(u.usd, u, ownEffective, best.effective) : null;
        return {
          model: u.key,
          actualUsd: u.usd,
          own,
          cheapest: best
            ? {
                siteName: best.a.reader.site?.name ?? "已移除的站点",
                accountId: best.a.reader.key,
                price: best.price,
                usd: usd === null ? null : round6(usd),
              }
            : null,
        };
      }),
  };
}
