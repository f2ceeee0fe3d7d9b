SELECT valid_from FROM p_sessions WHERE session_id = :session_id AND valid_to IS NULL;
