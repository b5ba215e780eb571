-- The price reads take the accounts whose read is due by an indexed time, instead of walking them all.
ALTER TABLE "workspace_accounts" ADD COLUMN "prices_next" DATETIME;

CREATE INDEX "workspace_accounts_state_prices_next_idx" ON "workspace_accounts"("state", "prices_next");

-- Every working account is due at once: the pass reads those whose last read is an hour old.
UPDATE "workspace_accounts" SET "prices_next" = "created_at" WHERE "state" = 'ok';
