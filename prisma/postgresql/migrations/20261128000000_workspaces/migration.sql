-- CreateTable
CREATE TABLE "workspaces" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,
    "name_key" TEXT NOT NULL,
    "password_hash" TEXT NOT NULL,
    "totp_secret" TEXT,
    "recovery_codes" TEXT,
    "totp_last_step" INTEGER,
    "created_from" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,
    "password_changed_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "workspaces_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace_sessions" (
    "id" TEXT NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT,
    "device" TEXT NOT NULL,
    "address" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,
    "last_used_at" TIMESTAMP(3) NOT NULL,
    "expires_at" TIMESTAMP(3),
    "active_account_id" INTEGER,

    CONSTRAINT "workspace_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace_accounts" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "site_id" INTEGER NOT NULL,
    "site_user_id" BIGINT NOT NULL,
    "site_url" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "access_token" TEXT NOT NULL,
    "session_id" TEXT,
    "username" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "alias" TEXT,
    "tags" TEXT NOT NULL,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "excluded" BOOLEAN NOT NULL DEFAULT false,
    "position" INTEGER NOT NULL,
    "state" TEXT NOT NULL,
    "state_message" TEXT,
    "state_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,
    "renew_until" TIMESTAMP(3),

    CONSTRAINT "workspace_accounts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workspace_invites" (
    "id" TEXT NOT NULL,
    "note" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),

    CONSTRAINT "workspace_invites_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "settings" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "settings_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE UNIQUE INDEX "workspaces_name_key_key" ON "workspaces"("name_key");

-- CreateIndex
CREATE INDEX "workspaces_created_from_created_at_idx" ON "workspaces"("created_from", "created_at");

-- CreateIndex
CREATE INDEX "workspace_sessions_workspace_id_idx" ON "workspace_sessions"("workspace_id");

-- CreateIndex
CREATE INDEX "workspace_sessions_expires_at_idx" ON "workspace_sessions"("expires_at");

-- CreateIndex
CREATE INDEX "workspace_accounts_site_id_site_user_id_idx" ON "workspace_accounts"("site_id", "site_user_id");

-- CreateIndex
CREATE UNIQUE INDEX "workspace_accounts_workspace_id_site_id_site_user_id_key" ON "workspace_accounts"("workspace_id", "site_id", "site_user_id");

