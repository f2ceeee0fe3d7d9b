SELECT count(*) AS n FROM p_executions WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) AND (:work = '' OR work = :work) AND (:session_id = '' OR session_id = :session_id);
