CREATE UNIQUE INDEX p_sessions_key ON p_sessions (session_id, valid_from);
CREATE INDEX p_sessions_from ON p_sessions (valid_from);
CREATE INDEX p_sessions_work ON p_sessions (work, valid_from);
CREATE INDEX p_sessions_active ON p_sessions (valid_from) WHERE valid_to IS NULL AND status = 'active';
CREATE INDEX p_sessions_active_left ON p_sessions (lvl, node, valid_from) WHERE valid_to IS NOT NULL AND status = 'active';
CREATE INDEX p_sessions_active_right ON p_sessions (lvl, node, valid_to) WHERE valid_to IS NOT NULL AND status = 'active';
CREATE INDEX p_sessions_work_start ON p_sessions (work, start_revision);
CREATE INDEX p_sessions_work_end ON p_sessions (work, ended_revision) WHERE ended_revision > 0;
