-- A call's slot is named by its token: an instance gives the store back the calls of the window
-- it sent while the store was away, each once.
DELETE FROM "site_budget_slots";
CREATE UNIQUE INDEX "site_budget_slots_token_key" ON "site_budget_slots"("token");
