/**
 * Price reads (docs/design.md 22): every hour, one instance (under a lease) reads the price list of
 * each site that workspaces hold accounts on, and each account's group, ratio and usable models,
 * as background work inside each site's budget; every change of a price is kept with its time.
 */
import { env } from "../core/env";
import { backgroundPace } from "../core/live-load";
import { logEvent } from "../core/log";
import { backgroundDb, type Db } from "../db/client";
import { refreshPrices } from "../prices/compare";
import { SITE_PRICES_TTL_MS } from "../prices/read";
import { listSource } from "../prices/lists";
import { verifyCharges } from "../ledger/check";
import { duePriceAccounts, pricesLater } from "../workspace/background";
import { runLeased } from "./leases";
import { startJob } from "./registry";

/** Accounts taken at a time (live requests have their turn between batches). */
const BATCH = 100;
/** A pass takes no batch after this long (its lease lasts 10 minutes); the rest is due at the next tick. */
const PASS_MS = 5 * 60_000;

/**
 * Reads what is due: the working accounts whose price read has come (an indexed due time, the
 * earliest first, a batch of 100 at a time: what a pass holds and reads does not grow with the
 * deployment), each with its site's list when that is an hour old. Each account taken is due
 * again an hour later, read or not (a site that failed is tried again then). Between batches the
 * pass gives live requests their turn. Returns how many sites and accounts were read.
 */
export async function readDuePrices(db: Db, now = new Date()): Promise<{ sites: number; accounts: number }> {
  const e = env();
  const deps = { db, timeoutMs: e.SITE_TIMEOUT_MS, perMinute: e.SITE_REQUESTS_PER_MINUTE, background: true };
  const read = { sites: 0, accounts: 0 };
  const started = performance.now();
  const pace = backgroundPace();
  for (;;) {
    const batch = await duePriceAccounts(db, now, BATCH);
    if (batch.ids.length === 0) break;
    try {
      const done = await refreshPrices(db, batch.accounts, deps, now);
      read.sites += done.sites;
      read.accounts += done.accounts;
    } finally {
      await pricesLater(db, batch.ids, new Date(now.getTime() + SITE_PRICES_TTL_MS));
    }
    if (batch.ids.length < BATCH || performance.now() - started > PASS_MS) break;
    await pace();
  }
  if (read.sites + read.accounts > 0) logEvent("prices.read", read);
  return read;
}

export function startPriceJob(): void {
  // Looked at every tick: the accounts whose hour has come, and their sites' lists an hour old.
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
