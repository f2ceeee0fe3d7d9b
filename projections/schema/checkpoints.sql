DROP TABLE IF EXISTS p_checkpoints;
DROP TABLE IF EXISTS p_contexts;
CREATE TABLE p_checkpoints (
  seq                   INTEGER NOT NULL PRIMARY KEY,
  checkpoint_id         TEXT    NOT NULL,
  session_id            TEXT    NOT NULL,
  work                  TEXT    NOT NULL,
  agent                 TEXT    NOT NULL,
  context_hash          TEXT    NOT NULL,
  context_hash_verified INTEGER NOT NULL,
  digest                TEXT    NOT NULL,
  next_action           TEXT    NOT NULL,
  open_loops            TEXT    NOT NULL,
  recorded_at           INTEGER NOT NULL
);
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
