DROP TABLE IF EXISTS p_claims;
CREATE TABLE p_claims (
  claim_id       TEXT    NOT NULL,
  work           TEXT    NOT NULL,
  session_id     TEXT    NOT NULL,
  agent          TEXT    NOT NULL,
  acquired_at    INTEGER NOT NULL,
  expires_at     INTEGER NOT NULL,
  fencing_token  INTEGER NOT NULL,
  state          TEXT    NOT NULL,
  release_reason TEXT    NOT NULL,
  released_at    INTEGER NOT NULL,
  valid_from     INTEGER NOT NULL,
  valid_to       INTEGER,
  PRIMARY KEY (claim_id, valid_from)
) WITHOUT ROWID;
CREATE UNIQUE INDEX p_claims_current ON p_claims (claim_id) WHERE valid_to IS NULL;
CREATE INDEX p_claims_work ON p_claims (work, valid_from);
CREATE INDEX p_claims_session ON p_claims (session_id, valid_from);
CREATE INDEX p_claims_from ON p_claims (valid_from);
