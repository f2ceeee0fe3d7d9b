DROP TABLE IF EXISTS p_checkpoints;
DROP TABLE IF EXISTS p_contexts;
CREATE TABLE p_checkpoints (
  seq        INTEGER NOT NULL PRIMARY KEY,
  session_id TEXT    NOT NULL
);
CREATE TABLE p_contexts (
  seq          INTEGER NOT NULL PRIMARY KEY,
  session_id   TEXT    NOT NULL,
  context_hash TEXT    NOT NULL
);
