-- Sync with the All API Hub extension: its file, the temporary copies of its uploads, the links
-- between its accounts and the saved ones, and what each write did.
CREATE TABLE "hub_syncs" (
    "workspace_id" INTEGER NOT NULL,
    "file" TEXT,
    "file_at" TIMESTAMP(3),
    "read_at" TIMESTAMP(3),
    "encrypted" BOOLEAN NOT NULL DEFAULT false,
    "passphrase" TEXT,
    "deletes" TEXT NOT NULL DEFAULT 'remove',
    "held_until" TIMESTAMP(3),

    CONSTRAINT "hub_syncs_pkey" PRIMARY KEY ("workspace_id")
);

CREATE TABLE "hub_files" (
    "workspace_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "hub_files_pkey" PRIMARY KEY ("workspace_id","name")
);

CREATE TABLE "hub_links" (
    "workspace_id" INTEGER NOT NULL,
    "hub_id" TEXT NOT NULL,
    "account_id" INTEGER,
    "ours" TEXT,
    "ours_at" TIMESTAMP(3) NOT NULL,
    "theirs" TEXT,
    "name" TEXT,
    "refused" TEXT,
    "removed_at" TIMESTAMP(3),
    "gone_there_at" TIMESTAMP(3),

    CONSTRAINT "hub_links_pkey" PRIMARY KEY ("workspace_id","hub_id")
);
CREATE INDEX "hub_links_account_id_idx" ON "hub_links"("account_id");

CREATE TABLE "hub_sync_runs" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "message" TEXT,
    "items" TEXT NOT NULL,

    CONSTRAINT "hub_sync_runs_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "hub_sync_runs_workspace_id_id_idx" ON "hub_sync_runs"("workspace_id", "id");
