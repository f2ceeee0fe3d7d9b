-- The sessions active at the head, most recently versioned first, for a
-- caller that stops after a few.
SELECT * FROM p_sessions INDEXED BY p_sessions_active WHERE status = 'active' AND valid_to IS NULL ORDER BY valid_from DESC;
