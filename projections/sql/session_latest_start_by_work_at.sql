SELECT session_id, start_revision, valid_from FROM p_sessions INDEXED BY p_sessions_work WHERE work = :work AND valid_from <= :rev ORDER BY valid_from DESC;
