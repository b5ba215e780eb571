-- AlterTable
ALTER TABLE "sites" ADD COLUMN "health_at" DATETIME;
ALTER TABLE "sites" ADD COLUMN "health_error" TEXT;
ALTER TABLE "sites" ADD COLUMN "health_ms" INTEGER;
ALTER TABLE "sites" ADD COLUMN "health_ok" BOOLEAN;
ALTER TABLE "sites" ADD COLUMN "requests_per_minute" INTEGER;

-- CreateTable
CREATE TABLE "operator" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "password_hash" TEXT NOT NULL,
    "updated_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "operator_sessions" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "created_at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "action" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "site_id" INTEGER,
    "before" TEXT,
    "after" TEXT
);

-- CreateIndex
CREATE INDEX "operator_sessions_expires_at_idx" ON "operator_sessions"("expires_at");

-- CreateIndex
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");

