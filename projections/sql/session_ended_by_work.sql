SELECT end_nth FROM p_sessions INDEXED BY p_sessions_work_end WHERE work = :work AND ended_revision > 0 AND ended_revision < :before ORDER BY ended_revision DESC LIMIT 1;
