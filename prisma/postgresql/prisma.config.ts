// Prisma CLI configuration for the PostgreSQL schema derived from prisma/schema.prisma.
// Used with `--config prisma/postgresql/prisma.config.ts`; the JS engine needs no download.
import { PrismaPg } from "@prisma/adapter-pg";
import { defineConfig } from "prisma/config";

process.env.DATABASE_URL ??= "postgresql://postgres@127.0.0.1:5432/postgres";

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: "schema.prisma",
  migrations: { path: "migrations" },
  adapter: () => Promise.resolve(new PrismaPg({ connectionString: process.env.DATABASE_URL })),
});
