import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { migratePostgres, migrateSqlite } from "../../../src/server/db/migrate";
import { sqlitePath } from "../../../src/server/db/client";
import { POSTGRES_SCHEMA, SOURCE, derivePostgresSchema } from "../../../scripts/prisma-schemas";
import { tempSqlite, throwawayPostgres } from "../../support/db";

type Shape = { tables: Record<string, string[]>; indexes: string[] };

/** Tables → columns of the models in prisma/schema.prisma (scalar fields, honouring @map/@@map). */
function modelShape(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const schema = readFileSync(SOURCE, "utf8");
  for (const [, name, body] of schema.matchAll(/^model (\w+) \{\n([\s\S]*?)^\}/gm)) {
    const table = /@@map\("([^"]+)"\)/.exec(body ?? "")?.[1] ?? name ?? "";
    out[table] = (body ?? "")
      .split("\n")
      .map((line) => /^\s+(\w+)\s+(\w+)(\??)\s*(.*)$/.exec(line))
      .filter(
        (m): m is RegExpExecArray =>
          m !== null && /^(String|Int|DateTime|Boolean|BigInt|Float|Decimal|Json|Bytes)$/.test(m[2] ?? ""),
      )
      .map((m) => /@map\("([^"]+)"\)/.exec(m[4] ?? "")?.[1] ?? m[1] ?? "")
      .sort();
  }
  return out;
}

function sqliteShape(url: string): Shape {
  const conn = new Database(sqlitePath(url), { readonly: true });
  try {
    const tables = conn
      .prepare(
        `SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' AND name <> '_prisma_migrations'`,
      )
      .all() as { name: string }[];
    const shape: Shape = { tables: {}, indexes: [] };
    for (const { name } of tables) {
      shape.tables[name] = (conn.prepare(`PRAGMA table_info("${name}")`).all() as { name: string }[])
        .map((c) => c.name)
        .sort();
      for (const idx of conn.prepare(`PRAGMA index_list("${name}")`).all() as { name: string; origin: string }[]) {
        if (idx.origin === "c") {
          const cols = (conn.prepare(`PRAGMA index_info("${idx.name}")`).all() as { name: string }[]).map(
            (c) => c.name,
          );
          shape.indexes.push(`${name}(${cols.join(",")})`);
        }
      }
    }
    shape.indexes.sort();
    return shape;
  } finally {
    conn.close();
  }
}

async function postgresShape(url: string): Promise<Shape> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const cols = await client.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
    );
    const shape: Shape = { tables: {}, indexes: [] };
    for (const r of cols.rows) (shape.tables[r.table_name] ??= []).push(r.column_name);
    for (const t of Object.values(shape.tables)) t.sort();
    const idx = await client.query<{ table: string; columns: string }>(
      `SELECT t.relname AS table, string_agg(a.attname, ',' ORDER BY k.ord) AS columns
         FROM pg_index i
         JOIN pg_class t ON t.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
         CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
        WHERE NOT i.indisprimary AND t.relname <> '_prisma_migrations'
        GROUP BY i.indexrelid, t.relname`,
    );
    shape.indexes = idx.rows.map((r) => `${r.table}(${r.columns})`).sort();
    return shape;
  } finally {
    await client.end();
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

describe("one source of truth for the models", () => {
  it("the PostgreSQL schema is the one derived from prisma/schema.prisma", () => {
    expect(readFileSync(POSTGRES_SCHEMA, "utf8")).toBe(derivePostgresSchema(readFileSync(SOURCE, "utf8")));
  });

  it("both providers' migrations build the tables, columns and indexes of the models", async () => {
    const sqlite = tempSqlite();
    cleanups.push(sqlite.cleanup);
    const postgres = await throwawayPostgres();
    cleanups.push(postgres.drop);
    migrateSqlite(sqlite.url);
    await migratePostgres(postgres.url);

    const fromSqlite = sqliteShape(sqlite.url);
    const fromPostgres = await postgresShape(postgres.url);
    expect(fromSqlite.tables).toEqual(modelShape());
    expect(fromPostgres.tables).toEqual(modelShape());
    expect(fromPostgres.indexes).toEqual(fromSqlite.indexes);
    expect(fromSqlite.indexes).toEqual([
      "account_actions(at)",
      "account_actions(site_id,site_user_id,at)",
      "alert_channels(workspace_id)",
      "alert_deliveries(alert_id)",
      "alert_deliveries(digest_id)",
      "alert_deliveries(status,next_at)",
      "alert_digests(workspace_id,cadence)",
      "alert_rules(workspace_id)",
      "alerts(live_key)",
      "alerts(workspace_id,since)",
      "audit_log(action,id)",
      "audit_log(at)",
      "audit_log(group_key)",
      "hub_links(account_id)",
      "hub_sync_runs(workspace_id,id)",
      "ledger_due(due_at)",
      "ledger_entries(site_id,site_user_id,at,fingerprint,ordinal)",
      "ledger_flags(site_id,site_user_id,at)",
      "ledger_flags(site_id,site_user_id,over)",
      "ledger_topups(site_id,site_user_id,at)",
      "login_attempts(window_start)",
      "operator_sessions(expires_at)",
      "sessions(expires_at)",
      "sessions(site_id,site_user_id)",
      "site_budget_slots(site_id,at)",
      "site_budget_slots(token)",
      "site_price_changes(site_id,model,at)",
      "site_price_reads(next_at)",
      "sites(url)",
      "statement_links(expires_at)",
      "workspace_accounts(auto_checkin,checkin_next)",
      "workspace_accounts(site_id,site_user_id)",
      "workspace_accounts(state,prices_next)",
      "workspace_accounts(state,renew_at)",
      "workspace_accounts(workspace_id,site_id,site_user_id)",
      "workspace_sessions(expires_at)",
      "workspace_sessions(workspace_id)",
      "workspace_sites(site_id)",
      "workspaces(created_from,created_at)",
      "workspaces(name_key)",
    ]);
  });
});
