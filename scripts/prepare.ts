/**
 * Everything the server needs before it listens: a valid environment, a session password,
 * and a migrated database. Used by `npm start`, `npm run dev` and `npm run demo`.
 */
import { EnvError, env } from "../src/server/core/env";
import { isPostgresUrl, sqlitePath } from "../src/server/db/client";
import { migrateStore } from "../src/server/db/migrate";
import { StoreRefused, checkSqliteHome } from "../src/server/db/sqlite-guard";
import { passwords } from "../src/server/session/passwords";

export async function prepare(): Promise<void> {
  // What is created from here on (database, WAL files, password) is readable by its owner only.
  process.umask(0o077);
  const e = env();
  // A SQLite database missing where the data folder remembers one is never made anew in silence.
  if (!isPostgresUrl(e.DATABASE_URL)) checkSqliteHome(sqlitePath(e.DATABASE_URL), e.DATA_DIR);
  passwords();
  const applied = await migrateStore(e.DATABASE_URL);
  for (const name of applied) console.error(`已应用数据库迁移 ${name}`);
}

export async function prepareOrExit(): Promise<void> {
  try {
    await prepare();
  } catch (error) {
    console.error(
      error instanceof EnvError || error instanceof StoreRefused
        ? error.message
        : `启动失败: ${(error as Error).message}`,
    );
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await prepareOrExit();
