UPDATE p_executions SET valid_to = :seq WHERE execution_id = :execution_id AND valid_to IS NULL;
