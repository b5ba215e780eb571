-- CreateTable
CREATE TABLE "ledger_entries" (
    "id" SERIAL NOT NULL,
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
    "content" TEXT NOT NULL,

    CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ledger_sync" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "holder" TEXT,
    "lease_until" TIMESTAMP(3),
    "oldest" INTEGER,
    "newest" INTEGER,
    "window_from" INTEGER,
    "window_to" INTEGER,
    "cursor" INTEGER,
    "synced_at" TIMESTAMP(3),
    "last_error" TEXT,

    CONSTRAINT "ledger_sync_pkey" PRIMARY KEY ("site_id","site_user_id")
);

-- CreateIndex
CREATE INDEX "ledger_entries_site_id_site_user_id_at_idx" ON "ledger_entries"("site_id", "site_user_id", "at");

-- CreateIndex
CREATE UNIQUE INDEX "ledger_entries_site_id_site_user_id_at_fingerprint_ordinal_key" ON "ledger_entries"("site_id", "site_user_id", "at", "fingerprint", "ordinal");

