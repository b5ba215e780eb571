/**
 * The alerts' background work (docs/design.md 21): every tick one instance (under a lease) evaluates
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
import { backgroundDb, type Db } from "../db/client";
import { alertRules } from "../alerts/rules";
import { runLeased } from "./leases";
import { startJob } from "./registry";

/** Workspaces read per batch of an evaluation pass (what a pass holds, whatever the deployment's size). */
const BATCH = 200;

/** Evaluates every workspace's rules, a batch of workspaces at a time; returns the events written. */
export async function evaluateAlerts(db: Db, now = new Date(), signal?: AbortSignal): Promise<number> {
  let events = 0;
  for (let after = 0; !signal?.aborted;) {
    const batch = await alertRules(db).workspacesWithRules(after, BATCH);
    for (const workspaceId of batch) events += await evaluateWorkspace(db, workspaceId, now);
    if (batch.length < BATCH) break;
    after = batch[batch.length - 1]!;
  }
  if (events > 0) logEvent("alerts.events", { events });
  return events;
}

export function startAlertJobs(): void {
  const tickMs = env().JOB_TICK_SECONDS * 1000;
  startJob("alerts.evaluate", tickMs, async (signal) => {
    const db = backgroundDb();
    await runLeased(db, "alerts.evaluate", { leaseMs: 5 * 60_000 }, async () => {
      await evaluateAlerts(db, new Date(), signal);
      const digests = await queueDueDigests(db);
      if (digests > 0) logEvent("alerts.digests", { digests });
      const pruned = (await pruneAlertHistory(db)) + (await pruneStatementLinks(db));
      if (pruned > 0) logEvent("alerts.pruned", { rows: pruned });
    });
  });
  // Deliveries are looked at more often than rules: a retry's time comes between ticks.
  startJob("alerts.deliver", Math.min(tickMs, 15_000), async () => {
    const sent = await deliverDue(backgroundDb());
    if (sent > 0) logEvent("alerts.delivered", { sent });
  });
}
