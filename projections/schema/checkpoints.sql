DROP TABLE IF EXISTS p_checkpoints;
DROP TABLE IF EXISTS p_contexts;
CREATE TABLE p_checkpoints (
  checkpoint_id         TEXT    NOT NULL PRIMARY KEY,
  seq                   INTEGER NOT NULL UNIQUE,
  session_id            TEXT    NOT NULL,
  work                  TEXT    NOT NULL,
  agent                 TEXT    NOT NULL,
  context_hash          TEXT    NOT NULL,
  context_hash_verified INTEGER NOT NULL,
  digest                TEXT    NOT NULL,
  next_action           TEXT    NOT NULL,
  open_loops            TEXT    NOT NULL,
  recorded_at           INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX p_checkpoints_session ON p_checkpoints (session_id, seq);
CREATE INDEX p_checkpoints_work ON p_checkpoints (work, seq);
CREATE TABLE p_contexts (
  seq            INTEGER NOT NULL PRIMARY KEY,
  session_id     TEXT    NOT NULL,
  work           TEXT    NOT NULL,
  context_hash   TEXT    NOT NULL,
  token_estimate INTEGER NOT NULL,
  token_budget   INTEGER NOT NULL,
  complete       INTEGER NOT NULL,
  compiled_at    INTEGER NOT NULL
);
CREATE INDEX p_contexts_session ON p_contexts (session_id, context_hash, seq);
