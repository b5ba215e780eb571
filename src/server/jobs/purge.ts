import { purgeOperatorSessions } from "../admin/operator";
import { purgeLoginAttempts } from "../auth/rate-limit";
import { quiet } from "../core/live-load";
import { logEvent } from "../core/log";
import { startJob } from "./registry";
import { backgroundDb } from "../db/client";
import { sessionStore } from "../session/store";
import { workspaceStore } from "../workspace/workspaces";

const INTERVAL_MS = 60_000;
const BATCH = 500;
/** Batches per run: bounded, so a backlog drains over a few runs instead of one long lock. */
const MAX_BATCHES = 20;

/**
 * Deletes expired sessions in bounded batches; returns how many went. An ended session is already
 * refused where it is read, so its deletion is housekeeping: a run takes one batch whatever comes,
 * and the next ones only while nobody is served (here or at another instance). A backlog of
 * 900,000 draining back to back cost its process's `me` 9 % on SQLite and 17 % on PostgreSQL, and
 * still about 5 % on PostgreSQL when it only slowed down for live requests (docs/benchmarks.md).
 */
export async function purgeExpiredSessions(store = sessionStore(backgroundDb())): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    if (i > 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!quiet()) break;
    }
    const n = await store.purgeExpired(BATCH);
    total += n;
    if (n < BATCH) break;
  }
  return total;
}

/** Every minute: expired sessions (the accounts', the operator's and the workspaces' devices), and the sign-in counters of finished windows. */
export function startPurges(): void {
  startJob("purge", INTERVAL_MS, async () => {
    const n = await purgeExpiredSessions();
    if (n > 0) logEvent("sessions.purged", { count: n });
    await purgeLoginAttempts(backgroundDb());
    await purgeOperatorSessions(backgroundDb());
    await workspaceStore(backgroundDb()).purgeExpired(BATCH);
  });
}
