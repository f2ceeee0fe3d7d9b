SELECT count(*) AS n FROM p_sessions WHERE status = 'active' AND valid_to IS NULL;
