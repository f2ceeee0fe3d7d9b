SELECT * FROM p_executions WHERE work = :work AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY started_seq DESC LIMIT :limit + 0;
