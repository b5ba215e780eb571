/**
 * The workspaces' background work (docs/design.md 18): every saved account's session is renewed from
 * its saved token before it ends, whether or not any browser is open, so the ledger job keeps
 * syncing it around the clock and a page never waits for a renewal. A few per minute, the most
 * urgent first, each through its site's budget; one at a time per account across instances.
 */
import pLimit from "p-limit";
import { env } from "../core/env";
import { logError, logEvent } from "../core/log";
import { backgroundDb, type Db } from "../db/client";
import { savedAccounts } from "../workspace/saved-accounts";
import { startAlertJobs } from "./alerts";
import { startCheckinJob } from "./checkin";
import { startChargeCheckJob, startPriceJob } from "./prices";
import { startJob } from "./registry";
import { refreshSiteGuard } from "../sites/workspace-sites";

/** Renewals per tick from this process (a tick a minute by default: 200 accounts are all renewed within a day many times over). */
const RENEWALS_PER_TICK = 20;
const RENEWALS_AT_ONCE = 4;
/** A renewal that could not be done waits this long before its next try. */
const RETRY_MS = 5 * 60_000;

export type RenewalOptions = { timeoutMs: number; perMinute: number };

/** Renews the saved accounts' sessions that end soon; returns how many were renewed. */
export async function renewSavedSessions(db: Db, opts: RenewalOptions, now = new Date()): Promise<number> {
  const accounts = savedAccounts(db, { timeoutMs: opts.timeoutMs, perMinute: opts.perMinute });
  const due = await accounts.dueForRenewal(RENEWALS_PER_TICK, now);
  const limit = pLimit(RENEWALS_AT_ONCE);
  const renewed = await Promise.all(
    due.map((account) =>
      limit(async () => {
        if (account.state === "ok" && (await accounts.renewNow(account))) return true;
        // Its site could not be asked (or is gone): looked at again later, and the others meanwhile.
        await accounts.renewLater(account.id, new Date(now.getTime() + RETRY_MS));
        return false;
      }),
    ),
  );
  const count = renewed.filter(Boolean).length;
  if (due.length > 0) logEvent("workspace.renewals", { due: due.length, renewed: count });
  return count;
}

export function startWorkspaceJobs(): void {
  const e = env();
  const opts = { timeoutMs: e.SITE_TIMEOUT_MS, perMinute: e.SITE_REQUESTS_PER_MINUTE };
  startJob("workspace.renewals", e.JOB_TICK_SECONDS * 1000, async () => {
    await renewSavedSessions(backgroundDb(), opts);
  });
  startCheckinJob();
  startAlertJobs();
  startPriceJob();
  startChargeCheckJob();
  // Which addresses are workspaces' own (called on public addresses only): now, then every minute.
  void refreshSiteGuard(backgroundDb()).catch((error: unknown) => logError("sites.guard", error));
  startJob("sites.guard", 60_000, () => refreshSiteGuard(backgroundDb()));
}
