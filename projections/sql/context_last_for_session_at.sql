SELECT context_hash FROM p_contexts WHERE session_id = :session_id AND seq <= :rev ORDER BY seq DESC LIMIT 1;
