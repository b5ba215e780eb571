/**
 * Reading prices (docs/design.md 22): a site's published list and group ratios (the same for every
 * account: read once per site), and an account's group, its ratio, its usable models and, where
 * the site publishes no prices (one-api) or not for its group, the prices fitted from its own log
 * over the last 7 days. Read through the site's budget like every other call; kept by store.ts.
 */
import type { Db } from "../db/client";
import {
  fitPrice,
  groupsRequest,
  parseGroupRatios,
  parsePrices,
  parseUserModels,
  pricesRequest,
  userModelsRequest,
  type ModelPrice,
} from "../gateway/prices";
import { isRow, selfInfo } from "../gateway/reads";
import { fitSumsOf, loggedGroupRatio } from "../ledger/price-facts";
import {
  contextOf,
  openSite,
  read,
  readEnvelope,
  SiteDataError,
  type Account,
  type SiteDataDeps,
} from "../site-data/calls";
import { priceStore } from "./store";
import { pricesDueNow } from "../workspace/background";

/** The group a user object names; a site that names none bills the account as `default`. */
const accountGroup = (group: string) => group || "default";

export type ReadOutcome = { changes: number; published: boolean };

/** Reads the site's list through this account (a token sees what every token sees) and keeps it. */
export async function readSitePrices(
  db: Db,
  account: Account,
  deps: SiteDataDeps,
  now = new Date(),
): Promise<ReadOutcome> {
  const site = await openSite(account, deps);
  const request = pricesRequest(site.family);
  let prices: ModelPrice[] = [];
  let groupRatios: Record<string, number> = {};
  if (request) {
    // A build without the route (404), or a site that switched its price page off (403 "pricing is
    // disabled", one-hub's "pricing data not found"): it publishes none.
    const envelope = await readEnvelope(contextOf(account, site, deps), request);
    if (envelope?.success === true) {
      prices = parsePrices(site.family, envelope, site.money.quotaPerUnit);
      groupRatios = parseGroupRatios(envelope.group_ratio);
    }
  }
  const groups = groupsRequest(site.family);
  if (groups) {
    const envelope = await readEnvelope(contextOf(account, site, deps), groups);
    if (envelope?.success === true) groupRatios = { ...groupRatios, ...parseGroupRatios(envelope.data) };
  }
  const changes = await priceStore(db).recordSite(site.id, { prices, published: prices.length > 0, groupRatios }, now);
  return { changes, published: prices.length > 0 };
}

/**
 * Reads the account's side: its group (from the user object), that group's ratio (the site's
 * groups, else the ratio its newest call was billed at), its usable models, and the prices
 * fitted from its log for the models it used that the site does not publish a price for.
 */
export async function readAccountPrices(db: Db, account: Account, deps: SiteDataDeps, now = new Date()): Promise<void> {
  const site = await openSite(account, deps);
  const ctx = contextOf(account, site, deps);
  const owner = { siteId: account.siteId, siteUserId: account.siteUserId };
  const store = priceStore(db);
  try {
    const self = await read(ctx, { path: "/api/user/self", query: {} });
    const group = accountGroup(isRow(self) ? selfInfo(self).user.group : "");
    const listed = await readEnvelope(ctx, userModelsRequest(site.family));
    const models = parseUserModels(listed?.success === true ? listed.data : null);
    const ratios = (await store.siteReads([site.id])).get(site.id)?.groupRatios ?? {};
    const groupRatio = ratios[group] ?? (await loggedGroupRatio(db, owner));
    const published = new Set(((await store.sitePrices([site.id])).get(site.id) ?? []).map((p) => p.model));
    const derived = [];
    for (const sums of await fitSumsOf(db, owner, now.getTime())) {
      if (!sums.model || published.has(sums.model)) continue;
      const fit = fitPrice(sums, site.money.quotaPerUnit);
      if (fit) derived.push({ model: sums.model, ...fit });
    }
    await store.recordAccount(owner, { group, groupRatio, models, derived, readAt: now, error: null });
  } catch (error) {
    if (error instanceof SiteDataError) await store.noteAccountError(owner, error.message, now);
    throw error;
  }
}

/**
 * The group a sync of the account's ledger read (its user object, read anyway for the balance):
 * a group the site changed is on the account's side at once, with its ratio, and its saved
 * accounts' sides are read again at the next price pass (their usable models follow the group).
 */
export async function followGroup(
  db: Db,
  owner: { siteId: number; siteUserId: number },
  group: string,
  now = new Date(),
): Promise<void> {
  if (await priceStore(db).noteGroup(owner, accountGroup(group))) await pricesDueNow(db, owner, now);
}
