/**
 * Whether the store can serve (readiness, docs/design.md 23): it answers within the limit, every
 * migration of this build is applied, and a small write succeeds (a read-only or full file, or a
 * PostgreSQL in recovery, fails it). Each check says what is wrong in words; never a secret.
 */
import { POSTGRES_MIGRATIONS_DIR, readMigrations } from "./migrate";
import { driverOf, type Db } from "./driver";
import { isStorageFull } from "./errors";
import { sqliteLost } from "./sqlite-guard";
import { commitsFailFull, noteCommit } from "./store-writes";

const expected = new Map<"sqlite" | "postgres", number>();

/** How many migrations this build has for the kind of store (read once). */
function migrationsOfBuild(kind: "sqlite" | "postgres"): number {
  let count = expected.get(kind);
  if (count === undefined) {
    count = (kind === "postgres" ? readMigrations(POSTGRES_MIGRATIONS_DIR) : readMigrations()).length;
    expected.set(kind, count);
  }
  return count;
}

async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout")), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** About what a ledger commit writes (a page of entries with their totals). */
const COMMIT_BYTES = 1024 * 1024;

/** Whether a write of a commit's size fits now (written and taken away again). */
async function roomForCommit(db: Db, timeoutMs: number): Promise<boolean> {
  const param = driverOf(db).kind === "postgres" ? "$1" : "?";
  try {
    await within(
      timeoutMs,
      db.$executeRawUnsafe(
        `INSERT INTO "settings" ("key", "value") VALUES ('ready.room', ${param}) ` +
          `ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value"`,
        "x".repeat(COMMIT_BYTES),
      ),
    );
    await db.$executeRawUnsafe(`DELETE FROM "settings" WHERE "key" = 'ready.room'`);
    return true;
  } catch {
    return false;
  }
}

/** null when the store is ready; else the reason in words. */
export async function storeProblem(db: Db, timeoutMs = 1000): Promise<string | null> {
  const kind = driverOf(db).kind;
  const lost = sqliteLost();
  if (lost) return lost;
  // A commit found no room lately: ready again once a write of a commit's size fits (the probe's
  // one small row below may fit where the ledger's pages do not).
  if (commitsFailFull()) {
    if (!(await roomForCommit(db, timeoutMs))) return "存储空间不足：数据库无法写入";
    noteCommit(null);
  }
  try {
    return await within(
      timeoutMs,
      (async () => {
        const rows = await db.$queryRawUnsafe<Array<{ n: number | bigint }>>(
          `SELECT COUNT(*) AS n FROM "_prisma_migrations" WHERE "finished_at" IS NOT NULL AND "rolled_back_at" IS NULL`,
        );
        const applied = Number(rows[0]?.n ?? 0);
        const wanted = migrationsOfBuild(kind);
        if (applied < wanted) return `数据库迁移未完成（已应用 ${applied} / ${wanted}）`;
        // The drivers name a parameter their own way.
        const param = kind === "postgres" ? "$1" : "?";
        await db.$executeRawUnsafe(
          `INSERT INTO "settings" ("key", "value") VALUES ('ready.probe', ${param}) ` +
            `ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value"`,
          new Date().toISOString(),
        );
        return null;
      })(),
    );
  } catch (error) {
    if ((error as Error).message === "timeout") return `数据库 ${timeoutMs} ms 内没有答复`;
    return isStorageFull(error) ? "存储空间不足：数据库无法写入" : "数据库不可用或不可写";
  }
}
