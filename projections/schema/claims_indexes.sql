CREATE UNIQUE INDEX p_claims_key ON p_claims (claim_id, valid_from);
CREATE INDEX p_claims_token ON p_claims (work, fencing_token);
CREATE INDEX p_claims_held_work ON p_claims (work, expires_at) WHERE valid_to IS NULL AND state = 'held';
CREATE INDEX p_claims_session ON p_claims (session_id, valid_from);
CREATE INDEX p_claims_held ON p_claims (expires_at) WHERE valid_to IS NULL AND state = 'held';
CREATE INDEX p_claims_held_from ON p_claims (valid_from, expires_at) WHERE valid_to IS NULL AND state = 'held';
CREATE INDEX p_claims_held_left ON p_claims (lvl, node, valid_from) WHERE valid_to IS NOT NULL AND state = 'held';
CREATE INDEX p_claims_held_right ON p_claims (lvl, node, valid_to) WHERE valid_to IS NOT NULL AND state = 'held';
