CREATE UNIQUE INDEX p_bindings_key ON p_bindings (external_session, valid_from);
CREATE INDEX p_bindings_session ON p_bindings (session_id, valid_from);
CREATE INDEX p_bindings_from ON p_bindings (valid_from);
