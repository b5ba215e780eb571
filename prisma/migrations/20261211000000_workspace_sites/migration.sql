-- Sites a workspace adds itself: offered to the workspaces that added them, shared by address.
ALTER TABLE "sites" ADD COLUMN "origin" TEXT NOT NULL DEFAULT 'operator';
CREATE INDEX "sites_url_idx" ON "sites"("url");

CREATE TABLE "workspace_sites" (
    "workspace_id" INTEGER NOT NULL,
    "site_id" INTEGER NOT NULL,
    "created_at" DATETIME NOT NULL,

    PRIMARY KEY ("workspace_id", "site_id")
);
CREATE INDEX "workspace_sites_site_id_idx" ON "workspace_sites"("site_id");

CREATE TABLE "blocked_sites" (
    "url" TEXT NOT NULL PRIMARY KEY,
    "created_at" DATETIME NOT NULL
);
