-- CreateTable
CREATE TABLE "ledger_archives" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "site_id" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "archived_at" DATETIME NOT NULL,
    "entries" INTEGER NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ledger_entries" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "at" INTEGER NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "token_name" TEXT NOT NULL,
    "quota" BIGINT NOT NULL,
    "prompt_tokens" BIGINT NOT NULL,
    "completion_tokens" BIGINT NOT NULL,
    "duration_ms" INTEGER,
    "stream" BOOLEAN NOT NULL,
    "content" TEXT NOT NULL
);
INSERT INTO "new_ledger_entries" ("at", "completion_tokens", "content", "duration_ms", "fingerprint", "id", "model", "ordinal", "prompt_tokens", "quota", "site_id", "site_user_id", "stream", "token_name", "type") SELECT "at", "completion_tokens", "content", "duration_ms", "fingerprint", "id", "model", "ordinal", "prompt_tokens", "quota", "site_id", "site_user_id", "stream", "token_name", "type" FROM "ledger_entries";
DROP TABLE "ledger_entries";
ALTER TABLE "new_ledger_entries" RENAME TO "ledger_entries";
CREATE UNIQUE INDEX "ledger_entries_site_id_site_user_id_at_fingerprint_ordinal_key" ON "ledger_entries"("site_id", "site_user_id", "at", "fingerprint", "ordinal");
CREATE TABLE "new_balance_snapshots" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "at" INTEGER NOT NULL,
    "quota" BIGINT NOT NULL,
    "used_quota" BIGINT NOT NULL,
    "request_count" BIGINT NOT NULL,

    PRIMARY KEY ("site_id", "site_user_id", "at")
);
INSERT INTO "new_balance_snapshots" ("at", "quota", "request_count", "site_id", "site_user_id", "used_quota") SELECT "at", "quota", "request_count", "site_id", "site_user_id", "used_quota" FROM "balance_snapshots";
DROP TABLE "balance_snapshots";
ALTER TABLE "new_balance_snapshots" RENAME TO "balance_snapshots";
CREATE TABLE "new_ledger_sync" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "holder" TEXT,
    "lease_until" DATETIME,
    "oldest" INTEGER,
    "newest" INTEGER,
    "window_from" INTEGER,
    "window_to" INTEGER,
    "cursor" INTEGER,
    "synced_at" DATETIME,
    "last_error" TEXT,
    "skipped" INTEGER NOT NULL DEFAULT 0,
    "skip_reason" TEXT,

    PRIMARY KEY ("site_id", "site_user_id")
);
INSERT INTO "new_ledger_sync" ("cursor", "holder", "last_error", "lease_until", "newest", "oldest", "site_id", "site_user_id", "synced_at", "window_from", "window_to") SELECT "cursor", "holder", "last_error", "lease_until", "newest", "oldest", "site_id", "site_user_id", "synced_at", "window_from", "window_to" FROM "ledger_sync";
DROP TABLE "ledger_sync";
ALTER TABLE "new_ledger_sync" RENAME TO "ledger_sync";
CREATE TABLE "new_audit_log" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "at" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "action" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "site_id" INTEGER,
    "before" TEXT,
    "after" TEXT,
    "count" INTEGER NOT NULL DEFAULT 1,
    "group_key" TEXT
);
INSERT INTO "new_audit_log" ("action", "actor", "after", "at", "before", "id", "site_id") SELECT "action", "actor", "after", "at", "before", "id", "site_id" FROM "audit_log";
DROP TABLE "audit_log";
ALTER TABLE "new_audit_log" RENAME TO "audit_log";
CREATE UNIQUE INDEX "audit_log_group_key_key" ON "audit_log"("group_key");
CREATE INDEX "audit_log_at_idx" ON "audit_log"("at");
CREATE INDEX "audit_log_action_id_idx" ON "audit_log"("action", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

