INSERT INTO p_contexts (seq, session_id, work, context_hash, token_estimate, token_budget, complete, compiled_at)
VALUES (:seq, :session_id, :work, :context_hash, :token_estimate, :token_budget, :complete, :compiled_at);
