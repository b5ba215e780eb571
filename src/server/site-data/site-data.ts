/**
 * Live site data of a signed-in account, read through its own site with its sealed access token
 * (docs/design.md 12): summary, usage log pages, tokens and top-ups. Answers are cached per account
 * for a few seconds and identical calls in flight are shared, so a busy dashboard costs the site
 * one call; every call goes through the site's gate (budget, in-flight limit, 429 pause).
 */
import {
  countRequest,
  effectivePageSize,
  familyHasLogType,
  familyHasTopups,
  isRow,
  logItem,
  logItemInBounds,
  logsRequest,
  pageOf,
  paging,
  selfInfo,
  statRequest,
  tokenItem,
  tokensRequest,
  topupItem,
  topupsRequest,
  usdOf,
  zeroBasedTokens,
  type LogItem,
  type LogQuery,
  type SelfInfo,
  type TopupItem,
} from "../gateway/reads";
import {
  familyHasPlans,
  planCatalog,
  plansListRequest,
  plansOf,
  plansSelfRequest,
  type PlansRead,
} from "../gateway/plans";
import type { LogsPage, OverviewRow, Summary, TokensPage, TopupsPage } from "./schemas";

export type { OverviewRow, Summary, TokensPage, TopupsPage } from "./schemas";
export { SiteDataError, type Account, type SiteDataDeps } from "./calls";
import { SiteDataError, contextOf, openSite, read, unexpected, type Account, type SiteDataDeps } from "./calls";
import { localMidnight } from "../core/time";
import { quotaOf } from "../../shared/bounds";
import { cached, tokenPageBases } from "./live-state";

/** A page of the site's answer, whatever its shape; an unknown shape is the operation's failure. */
function pageOrFail(data: unknown): NonNullable<ReturnType<typeof pageOf>> {
  const page = pageOf(data);
  if (!page) throw unexpected();
  return page;
}

/**
 * Page `page` of `pageSize` rows from a site whose pages hold `sitePage` rows whatever is asked
 * (one-api: 10): the site pages that hold it, read in turn (each inside the site's budget), cut to
 * the window. The page's total is the last site page's (one-api has none).
 */
async function windowOfPages<T extends { rows: unknown[] }>(
  page: number,
  pageSize: number,
  sitePage: number,
  readPage: (sitePageNumber: number) => Promise<T>,
): Promise<T> {
  if (sitePage === pageSize) return readPage(page);
  const first = (page - 1) * pageSize;
  const end = first + pageSize;
  const rows: Array<T["rows"][number]> = [];
  let last: T | undefined;
  for (let p = Math.floor(first / sitePage); p * sitePage < end; p++) {
    last = await readPage(p + 1);
    const offset = p * sitePage;
    rows.push(...last.rows.slice(Math.max(0, first - offset), end - offset));
    if (last.rows.length < sitePage) break;
  }
  return { ...last, rows } as T;
}

const CACHE_TTL_MS = { summary: 30_000, page: 15_000 } as const;

const keyOf = (account: Account, kind: string, params: unknown) =>
  `${account.siteId}:${account.siteUrl}:${account.siteUserId}:${kind}:${JSON.stringify(params)}`;

export async function summary(account: Account, tz: string, deps: SiteDataDeps): Promise<Summary> {
  return cached(keyOf(account, "summary", tz), CACHE_TTL_MS.summary, deps.refresh === true, async () => {
    const site = await openSite(account, deps);
    const ctx = contextOf(account, site, deps);
    const now = Date.now();
    const from = Math.floor(localMidnight(tz, now) / 1000);
    const to = Math.floor(now / 1000);
    const count = countRequest(site.family, from, to);
    const [self, stat, counted] = await Promise.all([
      read(ctx, { path: "/api/user/self", query: {} }),
      read(ctx, statRequest(site.family, from, to)),
      count ? read(ctx, count) : Promise.resolve(null),
    ]);
    if (!isRow(self) || !isRow(stat)) throw unexpected();
    const info = selfInfo(self);
    const todayQuota = typeof stat.quota === "number" ? quotaOf(stat.quota) : 0;
    // A figure outside its bounds is unknown: the account reads as a site that answered nonsense (docs/design.md 29).
    if (info.quota === null || info.usedQuota === null || info.requestCount === null || todayQuota === null) {
      throw unexpected();
    }
    const { money } = site;
    return {
      site: { id: site.id, name: site.name, url: site.url, family: site.family },
      user: info.user,
      money,
      balance: { quota: info.quota, usd: usdOf(info.quota, money) },
      used: { quota: info.usedQuota, usd: usdOf(info.usedQuota, money) },
      requestCount: info.requestCount,
      today: { quota: todayQuota, usd: usdOf(todayQuota, money) },
      todayRequests: counted === null ? null : (pageOf(counted)?.total ?? null),
      fetchedAt: new Date().toISOString(),
    };
  });
}

/** A page of the log as the site answers it. */
export type SiteLogsPage = Pick<LogsPage, "page" | "pageSize" | "total" | "hasMore" | "fetchedAt" | "items">;

export async function logs(account: Account, query: LogQuery, deps: SiteDataDeps): Promise<SiteLogsPage> {
  return cached(keyOf(account, "logs", query), CACHE_TTL_MS.page, deps.refresh === true, async () => {
    const site = await openSite(account, deps);
    const { pageSize } = query;
    const fetchedAt = new Date().toISOString();
    if (query.type && !familyHasLogType(site.family, query.type)) {
      return { ...paging(query.page, pageSize, 0, 0), items: [], fetchedAt };
    }
    const ctx = contextOf(account, site, deps);
    const sitePage = effectivePageSize(site.family, pageSize);
    const page = await windowOfPages(query.page, pageSize, sitePage, async (p) =>
      pageOrFail(await read(ctx, logsRequest(site.family, { ...query, page: p }))),
    );
    return {
      ...paging(query.page, pageSize, page.rows.length, page.total),
      items: page.rows.map((row) => logItem(site.family, row, site.money)).filter(logItemInBounds),
      fetchedAt,
    };
  });
}

/** How many of the newest entries `logsSince` reads at most (RECENT_PAGES pages of 100). */
const RECENT_PAGES = 5;

/**
 * The site's entries of one type (or all) in a time range, newest first, up to RECENT_PAGES pages
 * of 100: what was logged since the ledger's last sync. `complete` is false when there were more.
 */
export async function logsSince(
  account: Account,
  query: Pick<LogQuery, "type" | "from" | "to">,
  deps: SiteDataDeps,
): Promise<{ items: LogItem[]; complete: boolean }> {
  const items: LogItem[] = [];
  for (let page = 1; page <= RECENT_PAGES; page++) {
    const answer = await logs(account, { ...query, page, pageSize: 100 }, deps);
    items.push(...answer.items);
    if (!answer.hasMore) return { items, complete: true };
  }
  return { items, complete: false };
}

export async function tokens(
  account: Account,
  query: { page: number; pageSize: number },
  deps: SiteDataDeps,
): Promise<TokensPage> {
  return cached(keyOf(account, "tokens", query), CACHE_TTL_MS.page, deps.refresh === true, async () => {
    const site = await openSite(account, deps);
    const ctx = contextOf(account, site, deps);
    const { pageSize } = query;
    const fetchedAt = new Date().toISOString();
    // What each site's token list turned out to count pages from, once seen (new-api changed it in 2025).
    const tokenPageBase = tokenPageBases();
    const baseKey = `${site.id} ${site.url}`;
    const assumedZero = tokenPageBase.get(baseKey) ?? zeroBasedTokens(site.family);
    let page = await windowOfPages(query.page, pageSize, effectivePageSize(site.family, pageSize), async (p) =>
      pageOrFail(await read(ctx, tokensRequest(site.family, p, pageSize, assumedZero))),
    );
    const newApiLike = site.family === "new-api" || site.family === "new-api-legacy" || site.family === "unknown";
    // new-api's plain-array lists are 0-based, its paged ones 1-based: read the shape, ask again if it was the other.
    const actualZero = page.shape === "array";
    if (newApiLike && actualZero !== assumedZero) {
      tokenPageBase.set(baseKey, actualZero);
      const misread = !(query.page === 1 && assumedZero);
      if (misread) {
        page = pageOrFail(await read(ctx, tokensRequest(site.family, query.page, pageSize, actualZero)));
      }
    }
    return {
      ...paging(query.page, pageSize, page.rows.length, page.total),
      items: page.rows.map((row) => tokenItem(row, site.money)),
      fetchedAt,
    };
  });
}

export async function topups(
  account: Account,
  query: { page: number; pageSize: number },
  deps: SiteDataDeps,
): Promise<TopupsPage> {
  return cached(keyOf(account, "topups", query), CACHE_TTL_MS.page, deps.refresh === true, async () => {
    const site = await openSite(account, deps);
    const fetchedAt = new Date().toISOString();
    const unsupported = { ...paging(query.page, query.pageSize, 0, 0), supported: false, items: [], fetchedAt };
    if (!familyHasTopups(site.family)) return unsupported;
    const data = await read(contextOf(account, site, deps), topupsRequest(query.page, query.pageSize), {
      missingOk: true,
    });
    if (data === null) return unsupported;
    const page = pageOrFail(data);
    return {
      ...paging(query.page, query.pageSize, page.rows.length, page.total),
      supported: true,
      items: page.rows.map(topupItem),
      fetchedAt,
    };
  });
}

/**
 * An account's row made of its summary (live, or as its last sync left it); its 预计可用天数 is
 * the ledger's (docs/figures.md), filled in above this folder.
 */
export function okRow(s: Summary): OverviewRow {
  return { state: "ok", message: null, summary: s, daysLeft: null, lastKnown: null };
}

export async function overviewRow(account: Account, tz: string, deps: SiteDataDeps): Promise<OverviewRow> {
  try {
    return okRow(await summary(account, tz, deps));
  } catch (error) {
    if (!(error instanceof SiteDataError)) throw error;
    return {
      state: error.kind === "refused" ? "refused" : "unreachable",
      message: error.message,
      summary: null,
      daysLeft: null,
      lastKnown: null,
    };
  }
}

/** What the ledger's sync reads from an account's site, uncached. */
export type LedgerReader = {
  /**
   * One page of the usage log; `pageSize` is what the family really pages by, `total` the count of
   * matching entries where the family says it (not one-api).
   */
  logPage(query: LogQuery): Promise<{ items: LogItem[]; pageSize: number; total: number | null }>;
  /** The balance as the site reports it now, and the group the account is in (which its prices follow). */
  balance(): Promise<Pick<SelfInfo, "quota" | "usedQuota" | "requestCount"> & { group: string }>;
  /** The newest page of the top-up history (the last 30 days); null where the family keeps none. */
  topups(): Promise<TopupItem[] | null>;
  /** The account's subscriptions (new-api); null where the site has none (another family, an older build). */
  plans(): Promise<PlansRead | null>;
  /** The site's quota units per USD. */
  quotaPerUnit: number;
};

/** Opens the account's site once (profile and access token) for a sync's many reads. */
export async function ledgerReader(account: Account, deps: SiteDataDeps): Promise<LedgerReader> {
  const site = await openSite(account, deps);
  const ctx = contextOf(account, site, deps);
  return {
    async logPage(query) {
      const pageSize = effectivePageSize(site.family, query.pageSize);
      const page = pageOrFail(await read(ctx, logsRequest(site.family, query)));
      return { items: page.rows.map((row) => logItem(site.family, row, site.money)), pageSize, total: page.total };
    },
    async balance() {
      const self = await read(ctx, { path: "/api/user/self", query: {} });
      if (!isRow(self)) throw unexpected();
      const { quota, usedQuota, requestCount, user } = selfInfo(self);
      return { quota, usedQuota, requestCount, group: user.group };
    },
    async topups() {
      if (!familyHasTopups(site.family)) return null;
      const data = await read(ctx, topupsRequest(1, 100), { missingOk: true });
      return data === null ? null : pageOrFail(data).rows.map(topupItem);
    },
    async plans() {
      if (!familyHasPlans(site.family)) return null;
      const self = await read(ctx, plansSelfRequest, { missingOk: true });
      if (self === null) return null;
      const untitled = plansOf(self, new Map());
      if (!untitled) throw unexpected();
      if (untitled.plans.length === 0) return untitled;
      // Titles and reset periods from the plan list (enabled plans only; empty before the site's
      // payment terms are confirmed): without it the plans are still known, untitled.
      const list = await read(ctx, plansListRequest, { missingOk: true }).catch((error: unknown) => {
        if (error instanceof SiteDataError && error.kind !== "refused") return null;
        throw error;
      });
      return plansOf(self, planCatalog(list));
    },
    quotaPerUnit: site.money.quotaPerUnit,
  };
}
