/**
 * The alerts' background work (design.md 21): every tick one instance (under a lease) evaluates
 * every workspace's rules against the figures the syncs left, writing each event to the outbox;
 * then the digests whose time has come, and what is past keeping is removed. Every instance sends
 * what is due from the outbox, each message claimed by one of them.
 * A slow or failing channel delays no sync: this job has its own timer and its own limits.
 */
import { evaluateWorkspace } from "../alerts/evaluate";
import { deliverDue } from "../alerts/deliver";
import { queueDueDigests } from "../alerts/digests";
import { pruneAlertHistory } from "../alerts/history";
import { pruneStatementLinks } from "../alerts/statement-links";
import { env } from "../core/env";
import { logEvent } from "../core/log";
import { db as defaultDb, type Db } from "../db/client";
import { workspacesWithAccounts } from "../workspace/background";
import { runLeased } from "./leases";
import { startJob } from "./registry";

/** Evaluates every workspace's rules; returns the events written. */
export async function evaluateAlerts(db: Db, now = new Date()): Promise<number> {
  let events = 0;
  for (const workspaceId of await workspacesWithAccounts(db)) {
    events += await evaluateWorkspace(db, workspaceId, now);
  }
  if (events > 0) logEvent("alerts.events", { events });
  return events;
}

export function startAlertJobs(): void {
  const tickMs = env().JOB_TICK_SECONDS * 1000;
  startJob("alerts.evaluate", tickMs, async () => {
    const db = defaultDb();
    await runLeased(db, "alerts.evaluate", { leaseMs: 5 * 60_000 }, async () => {
      await evaluateAlerts(db);
      const digests = await queueDueDigests(db);
      if (digests > 0) logEvent("alerts.digests", { digests });
      const pruned = (await pruneAlertHistory(db)) + (await pruneStatementLinks(db));
      if (pruned > 0) logEvent("alerts.pruned", { rows: pruned });
    });
  });
  // Deliveries are looked at more often than rules: a retry's time comes between ticks.
  startJob("alerts.deliver", Math.min(tickMs, 15_000), async () => {
    const sent = await deliverDue(defaultDb());
    if (sent > 0) logEvent("alerts.delivered", { sent });
  });
}
