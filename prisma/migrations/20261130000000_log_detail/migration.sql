-- AlterTable
ALTER TABLE "ledger_entries" ADD COLUMN "detail" TEXT NOT NULL DEFAULT '';
