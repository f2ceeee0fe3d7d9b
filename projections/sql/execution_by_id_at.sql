SELECT * FROM p_executions WHERE execution_id = :execution_id AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
