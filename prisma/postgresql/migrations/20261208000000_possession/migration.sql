-- AlterTable
ALTER TABLE "sessions" ADD COLUMN "credential" TEXT;
ALTER TABLE "workspace_accounts" ADD COLUMN "credential" TEXT;
ALTER TABLE "workspace_sessions" ADD COLUMN "failed_checks" INTEGER NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "account_credentials" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "accepted_at" TIMESTAMP(3) NOT NULL,
    "ended_at" TIMESTAMP(3),

    CONSTRAINT "account_credentials_pkey" PRIMARY KEY ("site_id", "site_user_id", "fingerprint")
);
