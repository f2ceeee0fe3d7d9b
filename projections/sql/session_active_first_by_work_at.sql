-- The first session of one work item to have started among those active
-- at :rev (SessionsAt's order), through the index of (work, valid_from):
-- the item's session versions, never the project's active sessions.
SELECT * FROM p_sessions INDEXED BY p_sessions_work
WHERE work = :work AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) AND status = 'active'
ORDER BY started_at, start_revision, session_id LIMIT 1;
