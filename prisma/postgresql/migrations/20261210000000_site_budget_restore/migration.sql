-- A call's slot is named by its token: an instance gives the store back the calls of the window
-- it sent while the store was away, each once. The slots are a minute's calls: emptied, not kept.
DELETE FROM "site_budget_slots";
CREATE UNIQUE INDEX "site_budget_slots_token_key" ON "site_budget_slots"("token");

-- site_budget_take, answering also how many calls the window holds with this one (`used`): an
-- instance that loses the store keeps to what the others had spent as well as its own share.
-- The old function stays for instances of the previous release during a rolling upgrade.
CREATE FUNCTION site_budget_claim(
    p_site INTEGER, p_limit INTEGER, p_background BOOLEAN,
    p_window_ms BIGINT, p_max_in_flight INTEGER, p_token TEXT, p_busy_ms BIGINT,
    OUT answer BIGINT, OUT used INTEGER
) LANGUAGE plpgsql AS $$
DECLARE
    v_now BIGINT := (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT;
    v_paused BIGINT;
    v_count INTEGER;
    v_at BIGINT;
BEGIN
    PERFORM pg_advisory_xact_lock(727001, p_site);
    DELETE FROM site_budget_slots WHERE site_id = p_site AND at <= v_now - p_window_ms;
    SELECT count(*) INTO used FROM site_budget_slots WHERE site_id = p_site;
    SELECT until INTO v_paused FROM site_budget_pauses WHERE site_id = p_site;
    IF v_paused IS NOT NULL AND v_paused > v_now THEN
        answer := -(v_paused - v_now);
        RETURN;
    END IF;
    SELECT count(*) INTO v_count FROM site_budget_slots WHERE site_id = p_site AND busy_until > v_now;
    IF v_count >= p_max_in_flight THEN
        answer := 50;
        RETURN;
    END IF;
    IF used >= p_limit THEN
        SELECT at INTO v_at FROM site_budget_slots WHERE site_id = p_site ORDER BY at DESC OFFSET p_limit - 1 LIMIT 1;
        answer := greatest(1, v_at + p_window_ms - v_now);
        RETURN;
    END IF;
    INSERT INTO site_budget_slots (site_id, at, background, token, busy_until)
        VALUES (p_site, v_now, p_background, p_token, v_now + p_busy_ms);
    used := used + 1;
    answer := 0;
END
$$;
