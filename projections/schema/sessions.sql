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
  work_nth            INTEGER NOT NULL,
  ended_revision      INTEGER NOT NULL,
  end_nth             INTEGER NOT NULL,
  valid_from          INTEGER NOT NULL,
  valid_to            INTEGER,
  lvl                 INTEGER,
  node                INTEGER
);
