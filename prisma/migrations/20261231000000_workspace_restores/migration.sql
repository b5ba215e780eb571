-- A restore under way in a workspace: one at a time, and undone whole when it fails or its process dies.
CREATE TABLE "workspace_restores" (
    "workspace_id" INTEGER NOT NULL PRIMARY KEY,
    "held_until" DATETIME NOT NULL,
    "made" TEXT NOT NULL DEFAULT '{}'
);
