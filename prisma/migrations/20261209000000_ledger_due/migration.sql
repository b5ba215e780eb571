-- CreateTable
CREATE TABLE "ledger_due" (
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "due_at" DATETIME,
    "failures" INTEGER NOT NULL DEFAULT 0,

    PRIMARY KEY ("site_id", "site_user_id")
);

-- CreateIndex
CREATE INDEX "ledger_due_due_at_idx" ON "ledger_due"("due_at");

-- Every account with a session at the upgrade is due at once (the runner parks those without a live one).
INSERT INTO "ledger_due" ("site_id", "site_user_id", "due_at", "failures")
SELECT "site_id", "site_user_id", MIN("created_at"), 0 FROM "sessions" GROUP BY "site_id", "site_user_id";

-- The saved accounts' renewals and check-ins, chosen by an indexed due time.
ALTER TABLE "workspace_accounts" ADD COLUMN "renew_at" DATETIME;
ALTER TABLE "workspace_accounts" ADD COLUMN "checkin_next" DATETIME;
CREATE INDEX "workspace_accounts_state_renew_at_idx" ON "workspace_accounts"("state", "renew_at");
CREATE INDEX "workspace_accounts_auto_checkin_checkin_next_idx" ON "workspace_accounts"("auto_checkin", "checkin_next");
-- Renewed three hours before its session ends, as before; one without a session at once.
UPDATE "workspace_accounts" SET "renew_at" = COALESCE(
  (SELECT strftime('%Y-%m-%dT%H:%M:%f+00:00', "expires_at", '-3 hours') FROM "sessions" WHERE "sessions"."id" = "workspace_accounts"."session_id"),
  "created_at");
UPDATE "workspace_accounts" SET "checkin_next" = "created_at" WHERE "auto_checkin" = 1;
