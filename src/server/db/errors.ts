/**
 * Errors that mean "the database cannot serve right now", as opposed to a bug: it cannot be
 * reached, or a query outlasted its time (waiting on a lock, a store under load).
 */
const UNAVAILABLE_CODES = new Set([
  "P1001",
  "P1002",
  "P1008",
  "P1017",
  "P2024",
  "ECONNREFUSED",
  "ECONNRESET",
  "57P01",
  "57P03",
  "08006",
  "08001",
  "08003",
  // query_canceled (statement_timeout), lock_not_available, SQLite's busy timeout.
  "57014",
  "55P03",
  "SQLITE_BUSY",
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const { name, code, message, cause } = e as { name?: string; code?: string; message?: string; cause?: unknown };
    if (name === "PrismaClientInitializationError") return true;
    if (code && UNAVAILABLE_CODES.has(code)) return true;
    if (
      message &&
      /ECONNREFUSED|ECONNRESET|Connection terminated|Query read timeout|database is locked|terminating connection|connection timeout|timeout exceeded when trying to connect|the database system is (starting up|shutting down)|Can't reach database/i.test(
        message,
      )
    ) {
      return true;
    }
    e = cause;
  }
  return false;
}

/**
 * Errors that mean the store's disk is full (SQLite's SQLITE_FULL, PostgreSQL's disk_full 53100
 * or a file it could not extend): the operator's to fix, never the site's fault.
 */
export function isStorageFull(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const { code, message, cause } = e as { code?: string; message?: string; cause?: unknown };
    if (code === "SQLITE_FULL" || code === "53100" || code === "ENOSPC") return true;
    if (
      message &&
      /database or disk is full|No space left on device|could not extend file|SQLITE_FULL/i.test(message)
    ) {
      return true;
    }
    e = cause ?? (e as { originalError?: unknown }).originalError;
  }
  return false;
}

/**
 * Errors of the store itself (Prisma's and its drivers'), whatever they say: a sign-in that met
 * one is this service's failure, never the site's.
 */
export function isStoreError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    const { name, code, cause } = e as { name?: string; code?: unknown; cause?: unknown };
    if (typeof name === "string" && (name.startsWith("PrismaClient") || name === "DriverAdapterError")) return true;
    if (typeof code === "string" && /^(P\d{4}|SQLITE_\w+)$/.test(code)) return true;
    e = cause;
  }
  return false;
}
