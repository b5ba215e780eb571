import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { closeDb, createDb, sqlitePath, type Db } from "../../src/server/db/client";
import { migratePostgres, migrateSqlite } from "../../src/server/db/migrate";

export type TempDb = { kind: "sqlite" | "postgres"; url: string; dir: string; db: Db; cleanup: () => Promise<void> };

/** The PostgreSQL server tests use: TEST_DATABASE_URL, else the local one (trust auth). */
const POSTGRES_ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/** Which store this test process runs on (the vitest project sets TEST_STORE). */
function storeKind(): "sqlite" | "postgres" {
  return process.env.TEST_STORE === "postgres" ? "postgres" : "sqlite";
}

/** Opens a client on a migrated store; cleanup disconnects, drops what `drop` drops, and removes the folder. */
function opened(
  kind: TempDb["kind"],
  url: string,
  dir: string,
  drop: () => Promise<void> = () => Promise.resolve(),
): TempDb {
  const db = createDb(url);
  return {
    kind,
    url,
    dir,
    db,
    cleanup: async () => {
      await closeDb(db);
      await drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A fresh, migrated SQLite file in its own folder. */
export function tempSqlite(): TempDb {
  const dir = mkdtempSync(path.join(tmpdir(), "gd-test-"));
  const url = `file:${path.join(dir, "test.db")}`;
  migrateSqlite(url);
  return opened("sqlite", url, dir);
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${POSTGRES_ADMIN_URL} (${(error as Error).message}). ` +
        "Start it, set TEST_DATABASE_URL, or run with SKIP_POSTGRES=1.",
    );
  }
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** An empty PostgreSQL database of its own, dropped by the returned function. */
export async function throwawayPostgres(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `gd_test_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  return {
    url: databaseUrl(POSTGRES_ADMIN_URL, name),
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

/** A fresh, migrated PostgreSQL database of its own. */
export async function tempPostgres(): Promise<TempDb> {
  const dir = mkdtempSync(path.join(tmpdir(), "gd-test-"));
  const { url, drop } = await throwawayPostgres();
  await migratePostgres(url);
  return opened("postgres", url, dir, drop);
}

/** A fresh store of the kind this test process runs on. */
export function tempStore(): Promise<TempDb> {
  return storeKind() === "postgres" ? tempPostgres() : Promise.resolve(tempSqlite());
}

/**
 * Where a further server on the same data may run: a SQLite store is one process's (the first
 * server holds its lock), so a copy of it as it is now, in a folder of its own; a PostgreSQL store
 * is shared as it is.
 */
export function storeForAnotherServer(store: TempDb): { url: string; dir: string } {
  if (store.kind === "postgres") return { url: store.url, dir: store.dir };
  const dir = mkdtempSync(path.join(tmpdir(), "gd-copy-"));
  const file = path.join(dir, "test.db");
  const source = new Database(sqlitePath(store.url));
  try {
    source.exec(`VACUUM INTO '${file.replace(/'/g, "''")}'`);
  } finally {
    source.close();
  }
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return { url: `file:${file}`, dir };
}
