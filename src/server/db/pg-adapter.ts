/**
 * Prisma's PostgreSQL adapter, mended where an outage would drain its pool: when a transaction's
 * COMMIT or ROLLBACK fails (the server went away mid-transaction), Prisma takes the transaction
 * for ended and calls neither commit nor rollback, the only places the adapter gives its
 * connection back, so the pool counts it as in use for good. Each outage that cuts transactions
 * short took one connection for ever; once the pool's were all taken every query of the process
 * waited for one and timed out, the database long back (and closing the pool waited for ever).
 * Here a failed COMMIT or ROLLBACK gives the connection back as broken (the pool closes it and
 * opens a new one when wanted), and the error goes on up.
 */
import type { PrismaPg } from "@prisma/adapter-pg";
import { mendTransactions } from "./adapter-mend";

type Query = { sql: string };
type Tx = {
  executeRaw(q: Query): Promise<number>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** The adapter's own: its pool connection, and what it undoes when the transaction ends. */
  client?: { release(error?: Error | boolean): void };
  cleanup?: () => void;
};

const isEnd = (q: Query) => /^\s*(COMMIT|ROLLBACK)\b/i.test(q.sql);

function mend(tx: Tx): Tx {
  const connection = tx.client;
  if (typeof connection?.release !== "function") return tx;
  let ended = false;
  const commit = tx.commit.bind(tx);
  const rollback = tx.rollback.bind(tx);
  // The connection is given back once, whoever ends the transaction first.
  tx.commit = () => (ended ? Promise.resolve() : ((ended = true), commit()));
  tx.rollback = () => (ended ? Promise.resolve() : ((ended = true), rollback()));
  const executeRaw = tx.executeRaw.bind(tx);
  tx.executeRaw = (q) =>
    isEnd(q)
      ? executeRaw(q).catch((error: unknown) => {
          if (!ended) {
            ended = true;
            tx.cleanup?.();
            connection.release(error instanceof Error ? error : new Error(String(error)));
          }
          throw error;
        })
      : executeRaw(q);
  return tx;
}

export function mendedPgAdapter(factory: PrismaPg): PrismaPg {
  return mendTransactions(factory, mend);
}
