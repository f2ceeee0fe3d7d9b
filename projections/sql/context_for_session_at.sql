SELECT seq FROM p_contexts WHERE session_id = :session_id AND context_hash = :context_hash AND seq <= :rev ORDER BY seq DESC LIMIT 1;
