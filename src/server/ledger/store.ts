/**
 * The usage ledger's bulk statements, on the driver under the client: a page of entries with
 * their hourly totals (per model and token, and per type alone) and the sync's cursor in one
 * transaction, and the analytics' sums (store-sqlite.ts, store-pg.ts; what they share in
 * store-sql.ts). These run tens of thousands of rows a second, where Prisma's query layer costs
 * more than the database (docs/benchmarks.md); Prisma keeps the schema, the migrations and every
 * other ledger query.
 */
import { driverOf, type Db } from "../db/driver";
import type { LedgerStore } from "./store-sql";
import { postgresStore } from "./store-pg";
import { sqliteStore } from "./store-sqlite";
export type { EntryCursor, EntryFilter, EntryRow, Hourly, LedgerStore, Owner, Sums } from "./store-sql";
export { boundOf, ownerWhere } from "./owner";

const stores = new WeakMap<Db, LedgerStore>();

export function ledgerStore(db: Db): LedgerStore {
  let store = stores.get(db);
  if (!store) {
    const driver = driverOf(db);
    store = driver.kind === "postgres" ? postgresStore(driver.pool) : sqliteStore(driver.connection);
    stores.set(db, store);
  }
  return store;
}
