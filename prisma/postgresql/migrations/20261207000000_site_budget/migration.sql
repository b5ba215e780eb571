-- CreateTable
CREATE TABLE "site_budget_slots" (
    "id" SERIAL NOT NULL,
    "site_id" INTEGER NOT NULL,
    "at" BIGINT NOT NULL,
    "background" BOOLEAN NOT NULL,
    "token" TEXT NOT NULL,
    "busy_until" BIGINT,

    CONSTRAINT "site_budget_slots_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "site_budget_pauses" (
    "site_id" INTEGER NOT NULL,
    "until" BIGINT NOT NULL,

    CONSTRAINT "site_budget_pauses_pkey" PRIMARY KEY ("site_id")
);

-- CreateIndex
CREATE INDEX "site_budget_slots_site_id_at_idx" ON "site_budget_slots"("site_id", "at");

-- A call's slot of a site's budget, taken atomically for every instance of the deployment (one
-- site at a time under a transaction-scoped advisory lock, by the database's clock). Answers 0
-- when taken; a positive number: the milliseconds until a slot (or an in-flight place) frees; a
-- negative one: the site is paused for that many milliseconds (it answered 429). `p_limit` is the
-- whole budget for a live call, background work's share of it for background work.
CREATE FUNCTION site_budget_take(
    p_site INTEGER, p_limit INTEGER, p_background BOOLEAN,
    p_window_ms BIGINT, p_max_in_flight INTEGER, p_token TEXT, p_busy_ms BIGINT
) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    v_now BIGINT := (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
    v_paused BIGINT;
    v_count INTEGER;
    v_at BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(727001, p_site);
    DELETE FROM site_budget_slots WHERE site_id = p_site AND at <= v_now - p_window_ms;
    SELECT until INTO v_paused FROM site_budget_pauses WHERE site_id = p_site;
    IF v_paused IS NOT NULL AND v_paused > v_now THEN
        RETURN -(v_paused - v_now);
    END IF;
    SELECT count(*) INTO v_count FROM site_budget_slots WHERE site_id = p_site AND busy_until > v_now;
    IF v_count >= p_max_in_flight THEN
        RETURN 50;
    END IF;
    SELECT count(*) INTO v_count FROM site_budget_slots WHERE site_id = p_site;
    IF v_count >= p_limit THEN
        SELECT at INTO v_at FROM site_budget_slots WHERE site_id = p_site ORDER BY at DESC OFFSET p_limit - 1 LIMIT 1;
        RETURN greatest(1, v_at + p_window_ms - v_now);
    END IF;
    INSERT INTO site_budget_slots (site_id, at, background, token, busy_until)
        VALUES (p_site, v_now, p_background, p_token, v_now + p_busy_ms);
    RETURN 0;
END
$$;
