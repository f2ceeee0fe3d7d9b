CREATE UNIQUE INDEX p_sessions_key ON p_sessions (session_id, valid_from);
CREATE INDEX p_sessions_from ON p_sessions (valid_from);
CREATE INDEX p_sessions_work ON p_sessions (work, valid_from);
CREATE INDEX p_sessions_active ON p_sessions (session_id) WHERE valid_to IS NULL AND status = 'active';
