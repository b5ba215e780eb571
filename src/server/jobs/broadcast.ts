/**
 * The word between instances (docs/design.md 18): a write that changed an account's kept answers
 * (site-data/live-state.ts forget) is told to every other instance, through Redis when REDIS_URL
 * is set, else PostgreSQL when it is the store; on SQLite there is no other instance. The same line
 * carries the word that an instance answers live requests (core/live-load.ts): every instance's
 * background work then waits its turn (unless YIELD_TO_OTHER_INSTANCES=0 there).
 */
import type { Broadcast } from "../core/broadcast";
import { env } from "../core/env";
import { liveElsewhere, tellLiveWith } from "../core/live-load";
import { logError, logEvent } from "../core/log";
import { processState, type StatePart } from "../core/process-state";
import { postgresBroadcast, redisBroadcast } from "../db/broadcast";
import { db } from "../db/client";
import { driverOf } from "../db/driver";
import { forgetAll, forgetHere, tellOthersWith } from "../site-data/live-state";

const LINE: StatePart<{ broadcast: Broadcast | null }> = {
  name: "broadcast",
  create: () => ({ broadcast: null }),
  dispose: (line) => void line.broadcast?.close().catch(() => undefined),
};

export async function startBroadcast(): Promise<void> {
  const e = env();
  // The word that another instance answers people is heard unless this one is told not to.
  const live = e.YIELD_TO_OTHER_INSTANCES ? liveElsewhere : () => undefined;
  const handlers = { message: forgetHere, live, resumed: forgetAll };
  const driver = driverOf(db());
  const broadcast = e.REDIS_URL
    ? await redisBroadcast(e.REDIS_URL, handlers)
    : driver.kind === "postgres"
      ? await postgresBroadcast(e.DATABASE_URL, driver.pool, handlers)
      : null;
  processState().get(LINE).broadcast = broadcast;
  tellOthersWith(
    broadcast
      ? (prefix) => void broadcast.publish(prefix).catch((error: unknown) => logError("broadcast.publish", error))
      : null,
  );
  // The live word is repeated while live requests come: one lost (the line down) is not news.
  tellLiveWith(broadcast ? () => void broadcast.sayLive().catch(() => undefined) : null);
  logEvent("broadcast.store", { store: broadcast?.kind ?? "none" });
}
