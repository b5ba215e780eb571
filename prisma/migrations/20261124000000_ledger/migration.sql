-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "at" INTEGER NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "token_name" TEXT NOT NULL,
    "quota" INTEGER NOT NULL,
    "prompt_tokens" INTEGER NOT NULL,
    "completion_tokens" INTEGER NOT NULL,
    "duration_ms" INTEGER,
    "stream" BOOLEAN NOT NULL,
    "content" TEXT NOT NULL
);

-- CreateTable
CREATE TABLE "ledger_sync" (
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

    PRIMARY KEY ("site_id", "site_user_id")
);

-- CreateIndex
CREATE INDEX "ledger_entries_site_id_site_user_id_at_idx" ON "ledger_entries"("site_id", "site_user_id", "at");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_entries_site_id_site_user_id_at_fingerprint_ordinal_key" ON "ledger_entries"("site_id", "site_user_id", "at", "fingerprint", "ordinal");

