SELECT count(*) AS n FROM p_checkpoints WHERE session_id = :session_id AND seq <= :rev;
