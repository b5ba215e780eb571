/**
 * One source of truth for the models: prisma/schema.prisma (SQLite). The PostgreSQL schema is
 * derived from it by this script; `--check` fails when the derived file is out of date.
 */
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";

export const SOURCE = path.resolve("prisma/schema.prisma");
export const POSTGRES_SCHEMA = path.resolve("prisma/postgresql/schema.prisma");

const HEADER = "// Generated from prisma/schema.prisma by `npm run db:schemas`. Do not edit.\n\n";

export function derivePostgresSchema(source: string): string {
  const replaced = source
    .replace(/provider\s*=\s*"sqlite"/, 'provider = "postgresql"')
    .replace(/output\s*=\s*"\.\.\/src\/generated\/prisma"/, 'output          = "../../src/generated/prisma-pg"');
  if (!replaced.includes('"postgresql"') || !replaced.includes("prisma-pg")) {
    throw new Error("prisma/schema.prisma: datasource provider or generator output not found");
  }
  return HEADER + replaced.replace(/^\/\/ Models shared[^\n]*\n\/\/[^\n]*\n\n/, "");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const expected = derivePostgresSchema(readFileSync(SOURCE, "utf8"));
  if (process.argv.includes("--check")) {
    let actual = "";
    try {
      actual = readFileSync(POSTGRES_SCHEMA, "utf8");
    } catch {
      // missing counts as stale
    }
    if (actual !== expected) {
      console.error("prisma/postgresql/schema.prisma 已过期: 请运行 npm run db:schemas");
      process.exit(1);
    }
  } else {
    mkdirSync(path.dirname(POSTGRES_SCHEMA), { recursive: true });
    writeFileSync(POSTGRES_SCHEMA, expected);
    console.log(`已写入 ${path.relative(process.cwd(), POSTGRES_SCHEMA)}`);
  }
}
