DROP TABLE IF EXISTS p_bindings;
CREATE TABLE p_bindings (
  external_session TEXT    NOT NULL,
  client           TEXT    NOT NULL,
  session_id       TEXT    NOT NULL,
  work             TEXT    NOT NULL,
  checkpoint_id    TEXT    NOT NULL,
  bound_at         INTEGER NOT NULL,
  valid_from       INTEGER NOT NULL,
  valid_to         INTEGER,
  PRIMARY KEY (external_session, valid_from)
) WITHOUT ROWID;
CREATE UNIQUE INDEX p_bindings_current ON p_bindings (external_session) WHERE valid_to IS NULL;
CREATE INDEX p_bindings_session ON p_bindings (session_id, valid_from);
CREATE INDEX p_bindings_from ON p_bindings (valid_from);
