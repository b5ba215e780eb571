import path from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import Database from "better-sqlite3";
import pg from "pg";
import { PrismaClient } from "../../generated/prisma/client";
import { PrismaClient as PgPrismaClient } from "../../generated/prisma-pg/client";
import { env } from "../env";
import { logError } from "../log";

/** Both generated clients share the models of prisma/schema.prisma; code is written against one. */
export type Db = PrismaClient;

/**
 * The driver under a client, for the few statements on the request hot path that skip Prisma's
 * query layer (db/hot-path.ts). Prisma still owns the schema, migrations and every write.
 */
export type Driver = { kind: "sqlite"; file: string; timeout: number } | { kind: "postgres"; pool: pg.Pool };

/**
 * Kept on the client object under a registered symbol: Next bundles route handlers and pages
 * separately, each with its own copy of this module, while they share the one client.
 */
const DRIVER = Symbol.for("gateway-dashboard.driver");
type WithDriver = { [DRIVER]?: Driver };

export function driverOf(db: Db): Driver {
  const driver = (db as unknown as WithDriver)[DRIVER];
  if (!driver) throw new Error("client was not made by createDb");
  return driver;
}

function withDriver(client: Db, driver: Driver): Db {
  Object.defineProperty(client, DRIVER, { value: driver, enumerable: false });
  return client;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** The SQLite file a `file:` URL names, relative paths taken from the working directory. */
export function sqlitePath(url: string): string {
  const raw = url.replace(/^file:/, "").replace(/\?.*$/, "");
  return raw === ":memory:" ? raw : path.resolve(raw);
}

/** `timestamp` columns hold UTC (Prisma writes them so); read them as UTC whatever TZ says. */
const defaultParser = pg.types.getTypeParser as (oid: number, format?: string) => unknown;
const pgTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 1114 // timestamp without time zone
      ? (value: string) => new Date(`${value.replace(" ", "T")}Z`)
      : defaultParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

export function createDb(url: string): Db {
  const { DB_POOL_SIZE, DB_TIMEOUT_MS } = env();
  if (isPostgresUrl(url)) {
    const pool = new pg.Pool({
      connectionString: url,
      max: DB_POOL_SIZE,
      connectionTimeoutMillis: DB_TIMEOUT_MS,
      idleTimeoutMillis: 30_000,
      query_timeout: DB_TIMEOUT_MS,
      types: pgTypes,
    });
    // A restarting server drops idle connections; the pool replaces them, the process lives on.
    pool.on("error", (error) => logError("db.pool", error));
    const client = new PgPrismaClient({
      adapter: new PrismaPg(pool, { disposeExternalPool: true }),
    }) as unknown as Db;
    return withDriver(client, { kind: "postgres", pool });
  }
  const file = sqlitePath(url);
  // WAL mode is set by the migrator and persists in the file; `timeout` is SQLite's busy timeout.
  const client = new PrismaClient({ adapter: new PrismaBetterSQLite3({ url: file, timeout: DB_TIMEOUT_MS }) });
  // Per connection, like the hot-path one: no fsync per commit in WAL mode (see openSqliteConnection).
  client.$executeRawUnsafe("PRAGMA synchronous = NORMAL").catch((error: unknown) => logError("db.pragma", error));
  return withDriver(client, { kind: "sqlite", file, timeout: DB_TIMEOUT_MS });
}

/**
 * A second connection to the SQLite file for the hot-path statements. In WAL mode `synchronous =
 * NORMAL` keeps the file consistent through crashes and skips an fsync per commit.
 */
export function openSqliteConnection(driver: Extract<Driver, { kind: "sqlite" }>): Database.Database {
  const conn = new Database(driver.file, { timeout: driver.timeout, fileMustExist: true });
  conn.pragma("synchronous = NORMAL");
  return conn;
}

const globalForDb = globalThis as unknown as { gdDb?: Db };

/** The process-wide client, created on first use (never at import: builds open no database). */
export function db(): Db {
  globalForDb.gdDb ??= createDb(env().DATABASE_URL);
  return globalForDb.gdDb;
}
