-- 003: a project's log that moved away (awr migrate --to sqlite) is
-- fenced: its head row records where the log went (moved_to, for
-- messages, no credential), at what revision and when, and from then on
-- the log refuses every append, from every machine and every awr, here in
-- the database as well as in awr's own checks.
ALTER TABLE awr_heads ADD COLUMN moved_to text;
ALTER TABLE awr_heads ADD COLUMN moved_at bigint;

CREATE FUNCTION awr_events_fenced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	dest text;
BEGIN
	SELECT moved_to INTO dest FROM awr_heads WHERE project = NEW.project;
	IF dest IS NOT NULL THEN
		RAISE EXCEPTION 'the log of project % moved to %: it takes no more events', NEW.project, dest USING ERRCODE = 'AWRMV';
	END IF;
	RETURN NEW;
END
$$;

CREATE TRIGGER awr_events_fence BEFORE INSERT ON awr_events
FOR EACH ROW EXECUTE FUNCTION awr_events_fenced();
