SELECT * FROM p_sessions WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY started_at, start_revision, session_id;
