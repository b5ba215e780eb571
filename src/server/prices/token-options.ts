/**
 * What a token of an account may be given (docs/design.md 20): the groups its site lets it pick,
 * each with its ratio, and the models it may use, from the price reads (the list of the hour, the
 * account's side of the day, read now when older or without models). null where the family does not publish them (one-api has no group ratios for a token).
 */
import type { Db } from "../db/client";
import type { Account, SiteDataDeps } from "../site-data/calls";
import { refreshPrices } from "./compare";
import { priceStore } from "./store";

export type TokenOptions = {
  groups: { name: string; ratio: number }[] | null;
  group: string | null;
  models: string[] | null;
  readAt: string | null;
};

export async function tokenOptions(db: Db, account: Account, deps: SiteDataDeps): Promise<TokenOptions> {
  const store = priceStore(db);
  // A side without models (its group just changed on the site, or it could not list them) is read now.
  const known = (await store.accounts([account])).get(`${account.siteId}:${account.siteUserId}`);
  await refreshPrices(db, [account], deps, new Date(), { due: known?.models.length === 0 });
  const [reads, sides] = await Promise.all([store.siteReads([account.siteId]), store.accounts([account])]);
  const ratios = reads.get(account.siteId)?.groupRatios ?? {};
  const side = sides.get(`${account.siteId}:${account.siteUserId}`);
  const groups = Object.entries(ratios)
    .map(([name, ratio]) => ({ name, ratio }))
    .sort((a, b) => a.ratio - b.ratio || (a.name < b.name ? -1 : 1));
  return {
    groups: groups.length > 0 ? groups : null,
    group: side?.group || null,
    models: side && side.models.length > 0 ? side.models : null,
    readAt: side?.readAt.toISOString() ?? null,
  };
}
