/**
 * Everything the server needs before it listens: a valid environment, a session password,
 * and a migrated database. Used by `npm start`, `npm run dev` and `npm run demo`.
 */
import { EnvError, env } from "../src/server/env";
import { migrateSqlite } from "../src/server/db/migrate";
import { passwords } from "../src/server/session/keys";

export function prepare(): void {
  const e = env();
  passwords();
  if (!e.DATABASE_URL.startsWith("file:")) {
    throw new EnvError("DATABASE_URL: 目前只支持 SQLite（file:…）");
  }
  const applied = migrateSqlite(e.DATABASE_URL);
  for (const name of applied) console.error(`已应用数据库迁移 ${name}`);
}

export function prepareOrExit(): void {
  try {
    prepare();
  } catch (error) {
    console.error(error instanceof EnvError ? error.message : `启动失败: ${(error as Error).message}`);
    process.exit(1);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) prepareOrExit();
