-- Sync with the All API Hub extension: its file, the temporary copies of its uploads, the links
-- between its accounts and the saved ones, and what each write did.
CREATE TABLE "hub_syncs" (
    "workspace_id" INTEGER NOT NULL PRIMARY KEY,
    "file" TEXT,
    "file_at" DATETIME,
    "read_at" DATETIME,
    "encrypted" BOOLEAN NOT NULL DEFAULT false,
    "passphrase" TEXT,
    "deletes" TEXT NOT NULL DEFAULT 'remove',
    "held_until" DATETIME
);

CREATE TABLE "hub_files" (
    "workspace_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "created_at" DATETIME NOT NULL,

    PRIMARY KEY ("workspace_id", "name")
);

CREATE TABLE "hub_links" (
    "workspace_id" INTEGER NOT NULL,
    "hub_id" TEXT NOT NULL,
    "account_id" INTEGER,
    "ours" TEXT,
    "ours_at" DATETIME NOT NULL,
    "theirs" TEXT,
    "name" TEXT,
    "refused" TEXT,
    "removed_at" DATETIME,
    "gone_there_at" DATETIME,

    PRIMARY KEY ("workspace_id", "hub_id")
);
CREATE INDEX "hub_links_account_id_idx" ON "hub_links"("account_id");

CREATE TABLE "hub_sync_runs" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "workspace_id" INTEGER NOT NULL,
    "at" DATETIME NOT NULL,
    "message" TEXT,
    "items" TEXT NOT NULL
);
CREATE INDEX "hub_sync_runs_workspace_id_id_idx" ON "hub_sync_runs"("workspace_id", "id");
