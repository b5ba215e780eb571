-- AlterTable
ALTER TABLE "ledger_entries" ALTER COLUMN "quota" SET DATA TYPE BIGINT,
ALTER COLUMN "prompt_tokens" SET DATA TYPE BIGINT,
ALTER COLUMN "completion_tokens" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "balance_snapshots" ALTER COLUMN "request_count" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "ledger_sync" ADD COLUMN     "skip_reason" TEXT,
ADD COLUMN     "skipped" INTEGER NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "audit_log" ADD COLUMN     "count" INTEGER NOT NULL DEFAULT 1,
ADD COLUMN     "group_key" TEXT;

-- CreateTable
CREATE TABLE "ledger_archives" (
    "id" SERIAL NOT NULL,
    "site_id" INTEGER NOT NULL,
    "url" TEXT NOT NULL,
    "archived_at" TIMESTAMP(3) NOT NULL,
    "entries" INTEGER NOT NULL,

    CONSTRAINT "ledger_archives_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "audit_log_group_key_key" ON "audit_log"("group_key");

-- CreateIndex
CREATE INDEX "audit_log_action_id_idx" ON "audit_log"("action", "id");

