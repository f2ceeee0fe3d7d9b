INSERT INTO p_contexts (seq, session_id, context_hash) VALUES (:seq, :session_id, :context_hash);
