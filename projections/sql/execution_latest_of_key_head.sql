SELECT * FROM p_executions WHERE work = :work AND key = :key AND valid_to IS NULL ORDER BY started_seq DESC LIMIT 1;
