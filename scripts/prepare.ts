/**
 * Everything the server needs before it listens: a valid environment, a session password,
 * and a migrated database. Used by `npm start`, `npm run dev` and `npm run demo`.
 */
import { EnvError, env } from "../src/server/core/env";
import { migrateStore } from "../src/server/db/migrate";
import { passwords } from "../src/server/session/passwords";

export async function prepare(): Promise<void> {
  // What is created from here on (database, WAL files, password) is readable by its owner only.
  process.umask(0o077);
  const e = env();
  passwords();
  const applied = await migrateStore(e.DATABASE_URL);
  for (const name of applied) console.error(`已应用数据库迁移 ${name}`);
}

export async function prepareOrExit(): Promise<void> {
  try {
    await prepare();
  } catch (error) {
    console.error(error instanceof EnvError ? error.message : `启动失败: ${(error as Error).message}`);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await prepareOrExit();
