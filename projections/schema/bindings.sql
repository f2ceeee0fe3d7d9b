DROP TABLE IF EXISTS p_bindings;
CREATE TABLE p_bindings (
  external_session TEXT    NOT NULL,
  client           TEXT    NOT NULL,
  session_id       TEXT    NOT NULL,
  work             TEXT    NOT NULL,
  checkpoint_id    TEXT    NOT NULL,
  bound_at         INTEGER NOT NULL,
  valid_from       INTEGER NOT NULL,
  valid_to         INTEGER
);
