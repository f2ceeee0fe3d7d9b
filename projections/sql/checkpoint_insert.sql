INSERT INTO p_checkpoints (seq, session_id) VALUES (:seq, :session_id);
