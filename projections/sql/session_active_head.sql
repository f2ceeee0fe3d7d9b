SELECT * FROM p_sessions WHERE status = 'active' AND valid_to IS NULL ORDER BY started_at, start_revision, session_id;
