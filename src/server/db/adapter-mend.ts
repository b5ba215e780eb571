/**
 * Where the mends of Prisma's driver adapters (sqlite-adapter.ts, pg-adapter.ts) take hold: every
 * transaction an adapter of the factory starts goes through `mend` before Prisma sees it.
 */
type Factory = { connect(): Promise<unknown> };

export function mendTransactions<F extends Factory, A extends { startTransaction(level?: string): Promise<T> }, T>(
  factory: F,
  mend: (tx: T, adapter: A) => T,
): F {
  const connect = factory.connect.bind(factory);
  factory.connect = async () => {
    const adapter = (await connect()) as A;
    const start = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (level) => mend(await start(level), adapter);
    return adapter;
  };
  return factory;
}
