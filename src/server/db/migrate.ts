import { createHash, randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { isPostgresUrl, sqlitePath } from "./client";

/**
 * Applies prisma/migrations in order, recording them in Prisma's own `_prisma_migrations` table
 * (same columns and checksums), so `prisma migrate status` agrees with what ran here.
 */

type Migration = { name: string; sql: string; checksum: string };

const MIGRATIONS_DIR = path.resolve("prisma/migrations");
export const POSTGRES_MIGRATIONS_DIR = path.resolve("prisma/postgresql/migrations");

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  // Read at run time from the working directory; the build is told not to trace it.
  return readdirSync(/* turbopackIgnore: true */ dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

const SQLITE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" TEXT PRIMARY KEY NOT NULL,
  "checksum" TEXT NOT NULL,
  "finished_at" DATETIME,
  "migration_name" TEXT NOT NULL,
  "logs" TEXT,
  "rolled_back_at" DATETIME,
  "started_at" DATETIME NOT NULL DEFAULT current_timestamp,
  "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0
)`;

/** Migrates a SQLite file; safe when several processes start at once. Returns the names applied. */
export function migrateSqlite(url: string, dir = MIGRATIONS_DIR): string[] {
  const file = sqlitePath(url);
  // A folder made here is private; the database and its WAL files are readable by their owner only.
  if (file !== ":memory:") mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const conn = new Database(file, { timeout: 10_000 });
  try {
    conn.pragma("journal_mode = WAL");
    conn.exec(SQLITE_TABLE);
    if (file !== ":memory:") restrictSqliteFiles(file);
    const applied: string[] = [];
    for (const m of readMigrations(dir)) {
      // IMMEDIATE takes the write lock first, so a concurrent starter waits and then sees the row.
      conn.exec("BEGIN IMMEDIATE");
      try {
        const row = conn
          .prepare(
            `SELECT checksum FROM "_prisma_migrations" WHERE migration_name = ? AND finished_at IS NOT NULL AND rolled_back_at IS NULL`,
          )
          .get(m.name) as { checksum: string } | undefined;
        if (row) {
          if (row.checksum !== m.checksum) {
            throw new Error(`迁移 ${m.name} 已应用，但其文件内容已被修改`);
          }
          conn.exec("COMMIT");
          continue;
        }
        conn.exec(m.sql);
        conn
          .prepare(
            `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)`,
          )
          .run(randomUUID(), m.checksum, Date.now(), m.name, Date.now());
        conn.exec("COMMIT");
        applied.push(m.name);
      } catch (error) {
        if (conn.inTransaction) conn.exec("ROLLBACK");
        throw error;
      }
    }
    return applied;
  } finally {
    conn.close();
  }
}

/** Owner-only modes on a SQLite database and the WAL files beside it (those that exist). */
function restrictSqliteFiles(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(/* turbopackIgnore: true */ f)) chmodSync(f, 0o600);
  }
}

const POSTGRES_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** An arbitrary constant naming this application's migration lock among PostgreSQL advisory locks. */
const MIGRATION_LOCK = 7_270_736_901;

/**
 * Migrates a PostgreSQL database. A session-level advisory lock makes instances that start at once
 * take turns, so each migration is applied exactly once. Returns the names applied.
 */
export async function migratePostgres(url: string, dir = POSTGRES_MIGRATIONS_DIR): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    await client.query(POSTGRES_TABLE);
    const applied: string[] = [];
    for (const m of readMigrations(dir)) {
      const { rows } = await client.query<{ checksum: string }>(
        `SELECT checksum FROM "_prisma_migrations" WHERE migration_name = $1 AND finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        [m.name],
      );
      if (rows[0]) {
        if (rows[0].checksum !== m.checksum) throw new Error(`迁移 ${m.name} 已应用，但其文件内容已被修改`);
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count) VALUES ($1, $2, now(), $3, 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      }
      applied.push(m.name);
    }
    return applied;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => undefined);
    await client.end();
  }
}

/** Migrates whichever store the URL names. */
export async function migrateStore(url: string): Promise<string[]> {
  return isPostgresUrl(url) ? migratePostgres(url) : migrateSqlite(url);
}
