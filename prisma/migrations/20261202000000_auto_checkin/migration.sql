-- AlterTable
ALTER TABLE "workspace_accounts" ADD COLUMN "auto_checkin" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "workspace_accounts" ADD COLUMN "checkin_day" TEXT;
ALTER TABLE "workspace_accounts" ADD COLUMN "checkin_state" TEXT;
ALTER TABLE "workspace_accounts" ADD COLUMN "checkin_message" TEXT;
ALTER TABLE "workspace_accounts" ADD COLUMN "checkin_at" DATETIME;
ALTER TABLE "workspace_accounts" ADD COLUMN "checkin_tries" INTEGER NOT NULL DEFAULT 0;
