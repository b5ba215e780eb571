import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "../../generated/prisma/client";
import { env } from "../env";

export type Db = PrismaClient;

/** The SQLite file a `file:` URL names, relative paths taken from the working directory. */
export function sqlitePath(url: string): string {
  const raw = url.replace(/^file:/, "").replace(/\?.*$/, "");
  return raw === ":memory:" ? raw : path.resolve(raw);
}

export function createDb(url: string): Db {
  if (url.startsWith("file:")) {
    // WAL mode is set by the migrator and persists in the file; `timeout` is SQLite's busy timeout.
    const adapter = new PrismaBetterSQLite3({ url: sqlitePath(url), timeout: env().DB_TIMEOUT_MS });
    return new PrismaClient({ adapter });
  }
  throw new Error("PostgreSQL support is not enabled in this build");
}

const globalForDb = globalThis as unknown as { gdDb?: Db };

/** The process-wide client, created on first use (never at import: builds open no database). */
export function db(): Db {
  globalForDb.gdDb ??= createDb(env().DATABASE_URL);
  return globalForDb.gdDb;
}
