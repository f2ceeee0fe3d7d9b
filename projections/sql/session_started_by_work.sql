SELECT work_nth FROM p_sessions INDEXED BY p_sessions_work_start WHERE work = :work AND start_revision <= :until ORDER BY start_revision DESC LIMIT 1;
