import { purgeOperatorSessions } from "../admin/operator";
import { purgeLoginAttempts } from "../auth/rate-limit";
import { backgroundPace } from "../core/live-load";
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
 * Deletes expired sessions in bounded batches, live requests having their turn between them (a
 * backlog of 900,000 draining back to back cost its process's `me` 9 % on SQLite and 17 % on
 * PostgreSQL; docs/benchmarks.md); returns how many went.
 */
export async function purgeExpiredSessions(store = sessionStore(backgroundDb())): Promise<number> {
  const pace = backgroundPace();
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    if (i > 0) await pace();
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
