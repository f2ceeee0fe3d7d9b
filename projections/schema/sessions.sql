DROP TABLE IF EXISTS p_sessions;
CREATE TABLE p_sessions (
  session_id          TEXT    NOT NULL,
  work                TEXT    NOT NULL,
  agent               TEXT    NOT NULL,
  provider            TEXT    NOT NULL,
  model               TEXT    NOT NULL,
  status              TEXT    NOT NULL,
  outcome             TEXT    NOT NULL,
  started_at          INTEGER NOT NULL,
  start_revision      INTEGER NOT NULL,
  ended_at            INTEGER NOT NULL,
  predecessor_id      TEXT    NOT NULL,
  successor_id        TEXT    NOT NULL,
  last_checkpoint_id  TEXT    NOT NULL,
  last_checkpoint_seq INTEGER NOT NULL,
  last_context_hash   TEXT    NOT NULL,
  valid_from          INTEGER NOT NULL,
  valid_to            INTEGER,
  PRIMARY KEY (session_id, valid_from)
) WITHOUT ROWID;
CREATE UNIQUE INDEX p_sessions_current ON p_sessions (session_id) WHERE valid_to IS NULL;
CREATE INDEX p_sessions_from ON p_sessions (valid_from);
CREATE INDEX p_sessions_work ON p_sessions (work, valid_from);
