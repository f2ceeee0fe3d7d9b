CREATE INDEX p_checkpoints_session ON p_checkpoints (session_id, seq);
CREATE INDEX p_contexts_session ON p_contexts (session_id, seq);
