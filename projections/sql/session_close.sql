UPDATE p_sessions SET valid_to = :seq WHERE session_id = :session_id AND valid_to IS NULL;
