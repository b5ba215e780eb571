// Prisma CLI configuration. The JS/WASM schema engine (engine: "js") needs no
// native binary, so generate / migrate work offline. A config file stops Prisma
// from loading .env, hence the default URL here.
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { defineConfig } from "prisma/config";

process.env.DATABASE_URL ??= "file:./data/dashboard.db";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  adapter: () => Promise.resolve(new PrismaBetterSQLite3({ url: process.env.DATABASE_URL ?? "" })),
});
