/**
 * Price reads (docs/design.md 22): every hour, one instance (under a lease) reads the price list of
 * each site that workspaces hold accounts on, and each account's group, ratio and usable models,
 * as background work inside each site's budget; every change of a price is kept with its time.
 */
import { env } from "../core/env";
import { logEvent } from "../core/log";
import { backgroundDb, type Db } from "../db/client";
import { refreshPrices } from "../prices/compare";
import { listSource } from "../prices/lists";
import { verifyCharges } from "../ledger/check";
import { workingAccounts } from "../workspace/background";
import { runLeased } from "./leases";
import { startJob } from "./registry";

/** Reads what is due; returns how many sites and accounts were read. */
export async function readDuePrices(db: Db, now = new Date()): Promise<{ sites: number; accounts: number }> {
  const e = env();
  const deps = { db, timeoutMs: e.SITE_TIMEOUT_MS, perMinute: e.SITE_REQUESTS_PER_MINUTE, background: true };
  const read = { sites: 0, accounts: 0 };
  // A batch of accounts at a time: what a pass holds does not grow with the deployment.
  for (let after: number | null = 0; after !== null;) {
    const batch = await workingAccounts(db, after, 500);
    const done = await refreshPrices(db, batch.accounts, deps, now);
    read.sites += done.sites;
    read.accounts += done.accounts;
    after = batch.last;
  }
  if (read.sites + read.accounts > 0) logEvent("prices.read", read);
  return read;
}

export function startPriceJob(): void {
  // Looked at every tick; each site and account is read once its last read is an hour old.
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
