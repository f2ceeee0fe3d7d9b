INSERT INTO p_executions (execution_id, work, key, session_id, state, started_seq, finished_seq, retried_by, started, finished, valid_from, valid_to)
VALUES (:execution_id, :work, :key, :session_id, :state, :started_seq, :finished_seq, :retried_by, :started, :finished, :valid_from, :valid_to);
