import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createDb, type Db } from "../../src/server/db/client";
import { migrateSqlite } from "../../src/server/db/migrate";

export type TempDb = { url: string; dir: string; db: Db; cleanup: () => Promise<void> };

/** A fresh, migrated SQLite file in its own folder. */
export function tempSqlite(): TempDb {
  const dir = mkdtempSync(path.join(tmpdir(), "gd-test-"));
  const url = `file:${path.join(dir, "test.db")}`;
  migrateSqlite(url);
  const db = createDb(url);
  return {
    url,
    dir,
    db,
    cleanup: async () => {
      await db.$disconnect();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
