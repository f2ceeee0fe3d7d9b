SELECT seq FROM p_checkpoints WHERE session_id = :session_id AND seq <= :rev ORDER BY seq DESC LIMIT 1;
