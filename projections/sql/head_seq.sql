SELECT COALESCE(MAX(seq), 0) AS seq FROM events;
