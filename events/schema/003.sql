-- 003: kind lookups on a stream. "The latest claim_acquired of work/W",
-- "the session_ended of session/S": without this index such a lookup
-- walks the stream back from its end (events_stream_seq), so it grew with
-- the stream's length (a session's checkpoints, an item's lease renewals).
-- With it each is one seek. The seq needs no column of its own: it is the
-- rowid, which every index entry ends with, so the entries are ordered by
-- (stream, kind, seq).
CREATE INDEX events_stream_kind ON events (stream, kind);
