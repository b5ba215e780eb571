/**
 * The sites' budgets for the whole deployment (docs/design.md 18): in Redis when REDIS_URL is set,
 * else in PostgreSQL when it is the store; on SQLite (one process) they stay in memory.
 */
import { env } from "../core/env";
import { logEvent } from "../core/log";
import { db, isPostgresUrl } from "../db/client";
import { postgresBudget, redisBudget } from "../db/site-budget";
import { useSharedBudget } from "../gateway/gate";

export async function startSharedBudget(): Promise<void> {
  const e = env();
  const backend = e.REDIS_URL
    ? await redisBudget(e.REDIS_URL)
    : isPostgresUrl(e.DATABASE_URL)
      ? postgresBudget(db())
      : null;
  await useSharedBudget(backend);
  logEvent("budget.store", { store: backend?.kind ?? "memory" });
}
