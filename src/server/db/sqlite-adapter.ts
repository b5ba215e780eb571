/**
 * Prisma's SQLite adapter, mended where a full disk would wedge it: when a transaction's COMMIT
 * fails (SQLITE_FULL), Prisma takes the transaction for ended and calls neither commit nor
 * rollback, so the adapter's lock on its connection is never let go and every later transaction
 * of the process (an upsert, a $transaction) waits forever while plain queries go on. Here a
 * failed COMMIT rolls the connection back and lets go of the lock, and the error goes on up.
 */
import type { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { mendTransactions } from "./adapter-mend";
import { noteCommit } from "./store-writes";

type Query = { sql: string };
type Tx = {
  queryRaw(q: Query): Promise<unknown>;
  executeRaw(q: Query): Promise<number>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
};
type Connection = { inTransaction: boolean; prepare(sql: string): { run(): unknown } };
type Adapter = { client: Connection; startTransaction(level?: string): Promise<Tx> };

const isCommit = (q: Query) => /^\s*COMMIT\b/i.test(q.sql);

function mend(tx: Tx, connection: Connection): Tx {
  let ended = false;
  const commit = tx.commit.bind(tx);
  const rollback = tx.rollback.bind(tx);
  // The lock is let go once, whoever ends the transaction first.
  tx.commit = () => (ended ? Promise.resolve() : ((ended = true), commit()));
  tx.rollback = () => (ended ? Promise.resolve() : ((ended = true), rollback()));
  const failed = async (error: unknown): Promise<never> => {
    noteCommit(error);
    try {
      if (connection.inTransaction) connection.prepare("ROLLBACK").run();
    } catch {
      // SQLite ended it itself.
    }
    await tx.rollback();
    throw error;
  };
  const queryRaw = tx.queryRaw.bind(tx);
  const executeRaw = tx.executeRaw.bind(tx);
  // A statement inside the transaction that finds no room is what the commit meets too.
  const noted = (error: unknown): never => {
    noteCommit(error);
    throw error;
  };
  tx.queryRaw = (q) => (isCommit(q) ? queryRaw(q).catch(failed) : queryRaw(q).catch(noted));
  tx.executeRaw = (q) => (isCommit(q) ? executeRaw(q).catch(failed) : executeRaw(q).catch(noted));
  return tx;
}

export function mendedSqliteAdapter(factory: PrismaBetterSQLite3): PrismaBetterSQLite3 {
  return mendTransactions(factory, (tx: Tx, adapter: Adapter) => mend(tx, adapter.client));
}
