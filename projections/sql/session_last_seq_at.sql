-- The seq of the last event on a session's stream at or before :rev, from
-- the index alone (no read of the event's row).
SELECT seq FROM events INDEXED BY events_stream_seq WHERE stream = :stream AND seq <= :rev ORDER BY seq DESC LIMIT 1;
