/**
 * Price reads (docs/design.md 22): the price list of each site that workspaces hold accounts on is
 * read every hour, and each account's side (its usable models, the prices fitted from its log)
 * every day, as background work inside each site's budget, by every instance, each claiming its
 * own batches; every change of a price is kept with its time. An account's group follows its
 * ledger's syncs.
 */
import { env } from "../core/env";
import { answerTurn, backgroundPace } from "../core/live-load";
import { logEvent } from "../core/log";
import { backgroundDb, type Db } from "../db/client";
import { readSiteLists, refreshPrices } from "../prices/compare";
import { ACCOUNT_PRICES_TTL_MS, priceStore, SITE_PRICES_TTL_MS } from "../prices/store";
import { listSource } from "../prices/lists";
import { verifyCharges } from "../ledger/check";
import { claimPriceAccounts, pricesLater, siteReaders } from "../workspace/background";
import { runLeased } from "./leases";
import { startJob } from "./registry";

/** Sites or accounts taken at a time (live requests have their turn before each read and between batches). */
const BATCH = 100;
/** A pass takes no batch after this long; the rest is due at the next tick. */
const PASS_MS = 5 * 60_000;
/** How long a claimed batch is held: one whose pass died (its instance killed) is due again after it. */
const HOLD_MS = 10 * 60_000;

/**
 * Reads what is due, by indexed due times, a batch of 100 at a time (what a pass holds and reads
 * does not grow with the deployment), the earliest first: the sites' lists whose hour has come,
 * each through one of its working saved accounts; then the working accounts whose day has come
 * (a site's first list comes with its first account's side; after that, lists are the hourly
 * queue's). Each batch is claimed (the passes of several instances take different ones) and is
 * due again an hour (a list) or a day (an account) later, read or not. Before each read and
 * between batches the pass gives live requests their turn. Returns how many sites and accounts
 * were read.
 */
export async function readDuePrices(db: Db, now = new Date()): Promise<{ sites: number; accounts: number }> {
  const e = env();
  // Each answer is taken in on its turn beside live requests, as each read is sent on one.
  const deps = {
    db,
    timeoutMs: e.SITE_TIMEOUT_MS,
    perMinute: e.SITE_REQUESTS_PER_MINUTE,
    background: true,
    turn: answerTurn,
  };
  const read = { sites: 0, accounts: 0 };
  const started = performance.now();
  const pace = backgroundPace();
  const store = priceStore(db);
  const more = (taken: number) => taken === BATCH && performance.now() - started <= PASS_MS;
  const hold = () => new Date(Math.max(Date.now(), now.getTime()) + HOLD_MS);
  for (;;) {
    const siteIds = await store.claimSiteLists(now, BATCH, hold());
    if (siteIds.length === 0) break;
    try {
      read.sites += await readSiteLists(db, await siteReaders(db, siteIds), deps, now, pace);
    } finally {
      await store.siteListsLater(siteIds, new Date(now.getTime() + SITE_PRICES_TTL_MS));
    }
    if (!more(siteIds.length)) break;
    await pace();
  }
  for (;;) {
    const batch = await claimPriceAccounts(db, now, BATCH, hold());
    if (batch.ids.length === 0) break;
    try {
      const done = await refreshPrices(db, batch.accounts, deps, now, { due: true, turn: pace });
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
  // Looked at every tick, on every instance: the sites' lists whose hour has come, then the
  // accounts whose day has.
  startJob("prices.read", env().JOB_TICK_SECONDS * 1000, async () => {
    await readDuePrices(backgroundDb());
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
    // Up to 200 batches of 500 entries a pass: each batch takes its turns beside live requests.
    const looked = await verifyCharges(db, listSource(db), { turn: backgroundPace() });
    if (looked > 0) logEvent("ledger.checked", { entries: looked });
  });
}
