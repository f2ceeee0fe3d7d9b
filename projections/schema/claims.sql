DROP TABLE IF EXISTS p_claims;
CREATE TABLE p_claims (
  claim_id       TEXT    NOT NULL,
  work           TEXT    NOT NULL,
  session_id     TEXT    NOT NULL,
  agent          TEXT    NOT NULL,
  acquired_at    INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  ttl_ms         INTEGER NOT NULL,
  fencing_token  INTEGER NOT NULL,
  state          TEXT    NOT NULL,
  release_reason TEXT    NOT NULL,
  released_at    INTEGER NOT NULL,
  valid_from     INTEGER NOT NULL,
  valid_to       INTEGER,
  lvl            INTEGER,
  node           INTEGER
);
