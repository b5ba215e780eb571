import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../generated/prisma/client";
import { PrismaClient as PgPrismaClient } from "../../generated/prisma-pg/client";
import { env } from "../env";
import { logError } from "../log";

/** Both generated clients share the models of prisma/schema.prisma; code is written against one. */
export type Db = PrismaClient;

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** The SQLite file a `file:` URL names, relative paths taken from the working directory. */
export function sqlitePath(url: string): string {
  const raw = url.replace(/^file:/, "").replace(/\?.*$/, "");
  return raw === ":memory:" ? raw : path.resolve(raw);
}

export function createDb(url: string): Db {
  const { DB_POOL_SIZE, DB_TIMEOUT_MS } = env();
  if (isPostgresUrl(url)) {
    const adapter = new PrismaPg(
      {
        connectionString: url,
        max: DB_POOL_SIZE,
        connectionTimeoutMillis: DB_TIMEOUT_MS,
        idleTimeoutMillis: 30_000,
        query_timeout: DB_TIMEOUT_MS,
      },
      // A restarting server drops idle connections; the pool replaces them, the process lives on.
      { onPoolError: (error) => logError("db.pool", error) },
    );
    return new PgPrismaClient({ adapter }) as unknown as Db;
  }
  // WAL mode is set by the migrator and persists in the file; `timeout` is SQLite's busy timeout.
  const adapter = new PrismaBetterSQLite3({ url: sqlitePath(url), timeout: DB_TIMEOUT_MS });
  return new PrismaClient({ adapter });
}

const globalForDb = globalThis as unknown as { gdDb?: Db };

/** The process-wide client, created on first use (never at import: builds open no database). */
export function db(): Db {
  globalForDb.gdDb ??= createDb(env().DATABASE_URL);
  return globalForDb.gdDb;
}
