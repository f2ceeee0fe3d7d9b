-- 002: the gapless check seeks the primary key backward. Its query is
-- planned once per session, and on a table that was empty when it was
-- planned, max(seq) was planned as a scan of every row of the project (on
-- the stream index), kept for the session: each insert of a long
-- transaction (a migration's copy, a fresh cache's first writes) read every
-- row before it, a quadratic copy (10k events in 10 s of server CPU). The
-- latest row by ORDER BY seq DESC LIMIT 1 is planned as the backward scan of
-- (project, seq) whatever the table's size, and sequential scans are off
-- inside the function.
CREATE OR REPLACE FUNCTION awr_events_gapless() RETURNS trigger LANGUAGE plpgsql
SET enable_seqscan = off AS $$
BEGIN
	IF NEW.seq <> COALESCE((SELECT seq FROM awr_events WHERE project = NEW.project ORDER BY seq DESC LIMIT 1), 0) + 1 THEN
		RAISE EXCEPTION 'events: seq must be exactly project_revision + 1 (got %)', NEW.seq USING ERRCODE = 'check_violation';
	END IF;
	RETURN NEW;
END
$$;
