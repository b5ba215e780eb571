import Database from "better-sqlite3";
import pg from "pg";
import type { PrismaClient } from "../../generated/prisma/client";

/** Both generated clients share the models of prisma/schema.prisma; code is written against one. */
export type Db = PrismaClient;

/**
 * The driver under a client, for the few statements on the request hot path that skip Prisma's
 * query layer (hot-path.ts). SQLite's is a second connection to the file, opened on first use
 * and closed by closeDb.
 */
export type Driver =
  | { kind: "sqlite"; file: string; timeout: number; connection: () => Database.Database; close: () => void }
  | { kind: "postgres"; pool: pg.Pool };

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

export function withDriver(client: Db, driver: Driver): Db {
  Object.defineProperty(client, DRIVER, { value: driver, enumerable: false });
  return client;
}

/**
 * In WAL mode `synchronous = NORMAL` keeps the file consistent through crashes and skips an
 * fsync per commit; set per connection (Prisma's and the hot path's).
 */
export function sqliteDriver(file: string, timeout: number): Driver {
  let conn: Database.Database | undefined;
  return {
    kind: "sqlite",
    file,
    timeout,
    connection() {
      if (!conn) {
        conn = new Database(file, { timeout, fileMustExist: true });
        conn.pragma("synchronous = NORMAL");
      }
      return conn;
    },
    close() {
      conn?.close();
      conn = undefined;
    },
  };
}

/** `timestamp` columns hold UTC (Prisma writes them so); read them as UTC whatever TZ says. */
const defaultParser = pg.types.getTypeParser as (oid: number, format?: string) => unknown;
const pgTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 1114 // timestamp without time zone
      ? (value: string) => new Date(`${value.replace(" ", "T")}Z`)
      : defaultParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

export function postgresPool(url: string, size: number, timeoutMs: number): pg.Pool {
  return new pg.Pool({
    connectionString: url,
    max: size,
    connectionTimeoutMillis: timeoutMs,
    idleTimeoutMillis: 30_000,
    query_timeout: timeoutMs,
    types: pgTypes,
  });
}
