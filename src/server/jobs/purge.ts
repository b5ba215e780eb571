import { purgeLoginAttempts } from "../auth/rate-limit";
import { logError, logEvent } from "../core/log";
import { db } from "../db/client";
import { sessionStore } from "../session/store";

const INTERVAL_MS = 60_000;
const BATCH = 500;
/** Batches per run: bounded, so a backlog drains over a few runs instead of one long lock. */
const MAX_BATCHES = 20;

/** Deletes expired sessions in bounded batches; returns how many went. */
export async function purgeExpiredSessions(store = sessionStore(db())): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await store.purgeExpired(BATCH);
    total += n;
    if (n < BATCH) break;
  }
  return total;
}

let timer: NodeJS.Timeout | undefined;

/** Every minute: expired sessions (the accounts' and the operator's), and the sign-in counters of finished windows. */
export function startPurges(): void {
  if (timer) return;
  timer = setInterval(() => {
    purgeExpiredSessions()
      .then(async (n) => {
        if (n > 0) logEvent("sessions.purged", { count: n });
        await purgeLoginAttempts(db());
        await db().operatorSession.deleteMany({ where: { expiresAt: { lt: new Date() } } });
      })
      .catch((error: unknown) => logError("purge", error));
  }, INTERVAL_MS);
  timer.unref();
}
