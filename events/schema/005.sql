-- 005: the gapless trigger fails the insert with RAISE(FAIL) rather than
-- RAISE(ABORT), and events are inserted with INSERT OR FAIL. The check and
-- its message are the same; both fire before the row or any index entry is
-- written, so nothing of the statement is left to undo. An ABORT on an
-- insert that fires a trigger makes SQLite copy every page the insert
-- touches into a statement journal first, in case it must roll the
-- statement back: that copy was a quarter of the CPU of a write.
DROP TRIGGER events_seq_gapless;
CREATE TRIGGER events_seq_gapless BEFORE INSERT ON events
WHEN NEW.seq IS NOT COALESCE((SELECT MAX(seq) FROM events), 0) + 1
BEGIN
  SELECT RAISE(FAIL, 'events: seq must be exactly project_revision + 1');
END;
