UPDATE p_sessions SET valid_to = :seq, lvl = :lvl, node = :node WHERE session_id = :session_id AND valid_to IS NULL;
