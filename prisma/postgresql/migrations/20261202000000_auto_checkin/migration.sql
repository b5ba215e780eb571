-- AlterTable
ALTER TABLE "workspace_accounts" ADD COLUMN "auto_checkin" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "checkin_day" TEXT,
ADD COLUMN "checkin_state" TEXT,
ADD COLUMN "checkin_message" TEXT,
ADD COLUMN "checkin_at" TIMESTAMP(3),
ADD COLUMN "checkin_tries" INTEGER NOT NULL DEFAULT 0;
