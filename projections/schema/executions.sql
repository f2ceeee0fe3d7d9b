DROP TABLE IF EXISTS p_executions;
CREATE TABLE p_executions (
  execution_id TEXT    NOT NULL,
  work         TEXT    NOT NULL,
  key          TEXT    NOT NULL,
  session_id   TEXT    NOT NULL,
  state        TEXT    NOT NULL,
  started_seq  INTEGER NOT NULL,
  finished_seq INTEGER NOT NULL,
  retried_by   TEXT    NOT NULL,
  started      TEXT    NOT NULL,
  finished     TEXT    NOT NULL,
  valid_from   INTEGER NOT NULL,
  valid_to     INTEGER
);
CREATE UNIQUE INDEX p_executions_key ON p_executions (execution_id, valid_from);
CREATE INDEX p_executions_open ON p_executions (execution_id) WHERE valid_to IS NULL;
CREATE INDEX p_executions_open_key ON p_executions (work, key, started_seq) WHERE valid_to IS NULL;
CREATE INDEX p_executions_work ON p_executions (work, valid_from);
