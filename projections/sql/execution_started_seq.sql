SELECT started_seq FROM p_executions WHERE execution_id = :execution_id LIMIT 1;
