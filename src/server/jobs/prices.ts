/**
 * Price reads (docs/design.md 22): one instance (under a lease) reads the price list of each site
 * that workspaces hold accounts on every hour, and each account's side (its usable models, the
 * prices fitted from its log) every day, as background work inside each site's budget; every
 * change of a price is kept with its time. An account's group follows its ledger's syncs.
 */
import { env } from "../core/env";
import { backgroundPace } from "../core/live-load";
import { logEvent } from "../core/log";
import { backgroundDb, type Db } from "../db/client";
import { readSiteLists, refreshPrices } from "../prices/compare";
import { ACCOUNT_PRICES_TTL_MS, priceStore, SITE_PRICES_TTL_MS } from "../prices/store";
import { listSource } from "../prices/lists";
import { verifyCharges } from "../ledger/check";
import { duePriceAccounts, pricesLater, siteReaders } from "../workspace/background";
import { runLeased } from "./leases";
import { startJob } from "./registry";

/** Sites or accounts taken at a time (live requests have their turn between batches). */
const BATCH = 100;
/** A pass takes no batch after this long (its lease lasts 10 minutes); the rest is due at the next tick. */
const PASS_MS = 5 * 60_000;

/**
 * Reads what is due, by indexed due times, a batch of 100 at a time (what a pass holds and reads
 * does not grow with the deployment), the earliest first: the sites' lists whose hour has come,
 * each through one of its working saved accounts; then the working accounts whose day has come,
 * each with its site's list where that is an hour old (a site's first list comes with its first
 * account). Whatever is taken is due again an hour (a list) or a day (an account) later, read or
 * not. Between batches the pass gives live requests their turn. Returns how many sites and
 * accounts were read.
 */
export async function readDuePrices(db: Db, now = new Date()): Promise<{ sites: number; accounts: number }> {
  const e = env();
  const deps = { db, timeoutMs: e.SITE_TIMEOUT_MS, perMinute: e.SITE_REQUESTS_PER_MINUTE, background: true };
  const read = { sites: 0, accounts: 0 };
  const started = performance.now();
  const pace = backgroundPace();
  const store = priceStore(db);
  const more = (taken: number) => taken === BATCH && performance.now() - started <= PASS_MS;
  for (;;) {
    const siteIds = await store.dueSiteLists(now, BATCH);
    if (siteIds.length === 0) break;
    try {
      read.sites += await readSiteLists(db, await siteReaders(db, siteIds), deps, now);
    } finally {
      await store.siteListsLater(siteIds, new Date(now.getTime() + SITE_PRICES_TTL_MS));
    }
    if (!more(siteIds.length)) break;
    await pace();
  }
  for (;;) {
    const batch = await duePriceAccounts(db, now, BATCH);
    if (batch.ids.length === 0) break;
    try {
      const done = await refreshPrices(db, batch.accounts, deps, now, { due: true });
      read.sites += done.sites;
      read.accounts += done.accounts;
    } finally {
      await pricesLater(db, batch.ids, new Date(now.getTime() + ACCOUNT_PRICES_TTL_MS));
    }
    if (!more(batch.ids.length)) break;
    await pace();
  }
  if (read.sites + read.accounts > 0) logEvent("prices.read", read);
  return read;
}

export function startPriceJob(): void {
  // Looked at every tick: the sites' lists whose hour has come, then the accounts whose day has.
  startJob("prices.read", env().JOB_TICK_SECONDS * 1000, async () => {
    const db = backgroundDb();
    await runLeased(db, "prices.read", { leaseMs: 10 * 60_000 }, async () => {
      await readDuePrices(db);
    });
  });
}

/**
 * 核对's verifying pass (docs/design.md 27): every tick, one instance verifies the consume entries
 * stored since, against their own ratios and the sites' lists, in bounded batches.
 */
export function startChargeCheckJob(): void {
  startJob("ledger.check", env().JOB_TICK_SECONDS * 1000, async () => {
    await verifyChargesLeased(backgroundDb());
  });
}

/** One pass, under the deployment's lease (false: another instance is running one). */
export function verifyChargesLeased(db: Db): Promise<boolean> {
  return runLeased(db, "ledger.check", { leaseMs: 10 * 60_000 }, async () => {
    const looked = await verifyCharges(db, listSource(db));
    if (looked > 0) logEvent("ledger.checked", { entries: looked });
  });
}
