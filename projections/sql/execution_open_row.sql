SELECT * FROM p_executions WHERE execution_id = :execution_id AND valid_to IS NULL;
