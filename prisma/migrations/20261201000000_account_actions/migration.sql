-- CreateTable
CREATE TABLE "account_actions" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "workspace_id" INTEGER,
    "at" DATETIME NOT NULL,
    "kind" TEXT NOT NULL,
    "ok" BOOLEAN NOT NULL,
    "message" TEXT NOT NULL,
    "quota" BIGINT,
    "device" TEXT NOT NULL
);

-- CreateIndex
CREATE INDEX "account_actions_site_id_site_user_id_at_idx" ON "account_actions"("site_id", "site_user_id", "at");

-- CreateIndex
CREATE INDEX "account_actions_at_idx" ON "account_actions"("at");
