-- The open active versions created by :rev, most recent first: with
-- session_active_closed_at, the sessions active at :rev.
SELECT * FROM p_sessions INDEXED BY p_sessions_active WHERE status = 'active' AND valid_to IS NULL AND valid_from <= :rev ORDER BY valid_from DESC;
