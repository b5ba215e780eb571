import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../generated/prisma/client";
import { PrismaClient as PgPrismaClient } from "../../generated/prisma-pg/client";
import { env } from "../core/env";
import { unheld } from "../core/live-load";
import { logError } from "../core/log";
import { watchPool } from "../core/metrics";
import { driverOf, postgresPool, sqliteDriver, withDriver, type Db } from "./driver";
import { mendedPgAdapter } from "./pg-adapter";
import { mendedSqliteAdapter } from "./sqlite-adapter";

export type { Db };

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** The SQLite file a `file:` URL names, relative paths taken from the working directory. */
export function sqlitePath(url: string): string {
  const raw = url.replace(/^file:/, "").replace(/\?.*$/, "");
  return raw === ":memory:" ? raw : path.resolve(raw);
}

/** A client on the store a URL names. Prisma owns the schema and migrations; see driver.ts for the rest. */
export function createDb(url: string, poolSize = env().DB_POOL_SIZE): Db {
  const { DB_TIMEOUT_MS } = env();
  if (isPostgresUrl(url)) {
    const pool = postgresPool(url, poolSize, DB_TIMEOUT_MS);
    // A restarting server drops idle connections; the pool replaces them, the process lives on.
    pool.on("error", (error) => logError("db.pool", error));
    const client = new PgPrismaClient({
      adapter: mendedPgAdapter(new PrismaPg(pool, { disposeExternalPool: true })),
    }) as unknown as Db;
    return withDriver(client, { kind: "postgres", pool });
  }
  const file = sqlitePath(url);
  // WAL mode is set by the migrator and persists in the file; `timeout` is SQLite's busy timeout.
  const client = new PrismaClient({
    adapter: mendedSqliteAdapter(new PrismaBetterSQLite3({ url: file, timeout: DB_TIMEOUT_MS })),
  });
  client.$executeRawUnsafe("PRAGMA synchronous = NORMAL").catch((error: unknown) => logError("db.pragma", error));
  return withDriver(client, sqliteDriver(file, DB_TIMEOUT_MS));
}

/** Disconnects a client and closes what its driver opened. */
export async function closeDb(db: Db): Promise<void> {
  const driver = driverOf(db);
  if (driver.kind === "sqlite") driver.close();
  await db.$disconnect();
}

const globalForDb = globalThis as unknown as { gdDb?: Db; gdBackgroundDb?: Db };

/** Its pool (PostgreSQL) is watched by the metrics under `name`. */
function watched(client: Db, name: string): Db {
  const driver = driverOf(client);
  if (driver.kind === "postgres") watchPool(name, driver.pool);
  return client;
}

/** The process-wide client, created on first use (never at import: builds open no database). */
export function db(): Db {
  globalForDb.gdDb ??= watched(createDb(env().DATABASE_URL), "requests");
  return globalForDb.gdDb;
}

/**
 * The client of the background jobs. On PostgreSQL its own pool (DB_BACKGROUND_POOL_SIZE): the
 * runner's syncs and their commits queue among themselves, never in front of a live request.
 * On SQLite the one client: its queries run one at a time on the process's thread either way.
 */
export function backgroundDb(): Db {
  const { DATABASE_URL, DB_BACKGROUND_POOL_SIZE } = env();
  if (!isPostgresUrl(DATABASE_URL)) return db();
  globalForDb.gdBackgroundDb ??= watched(createBackgroundDb(DATABASE_URL, DB_BACKGROUND_POOL_SIZE), "background");
  return globalForDb.gdBackgroundDb;
}

/**
 * A client for background work. On PostgreSQL its pool sends nothing new in a stretch's first
 * seconds of live requests (core/live-load.ts heldFor): a step of a sync that was under way when
 * people came stops at its next statement, instead of running its chain of queries beside them.
 * A statement already sent finishes, and so does a transaction already begun (it may hold locks):
 * only a statement of its own, or a transaction's start, waits.
 */
export function createBackgroundDb(url: string, poolSize: number): Db {
  const client = createDb(url, poolSize);
  const driver = driverOf(client);
  if (driver.kind !== "postgres") return client;
  const { pool } = driver;
  // A statement waits a third of a lease at most: a held renewal (sent every third) still comes in time.
  const held = () => unheld((env().JOB_LEASE_SECONDS * 1000) / 3);
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  pool.query = ((...args: unknown[]) => held().then(() => query(...args))) as never;
  // A transaction waits before Prisma's own wait for its connection begins (maxWait, 2 s), which
  // a held start would exceed: the pool's connect is left as it is.
  const transaction = client.$transaction.bind(client) as (...args: unknown[]) => Promise<unknown>;
  client.$transaction = ((...args: unknown[]) => held().then(() => transaction(...args))) as never;
  return client;
}

/** Closes the process's clients (the server's last step). */
export async function closeDbs(): Promise<void> {
  const { gdDb, gdBackgroundDb } = globalForDb;
  globalForDb.gdDb = globalForDb.gdBackgroundDb = undefined;
  await Promise.all([gdDb && closeDb(gdDb), gdBackgroundDb && closeDb(gdBackgroundDb)]);
}
