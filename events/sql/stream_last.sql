SELECT stream_version FROM events WHERE stream = :stream ORDER BY seq DESC LIMIT 1;
