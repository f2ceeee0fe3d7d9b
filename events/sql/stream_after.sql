SELECT seq, kind, stream FROM events WHERE stream = :stream AND seq > :after ORDER BY seq;
