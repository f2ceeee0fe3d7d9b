INSERT INTO p_claims (claim_id, work, session_id, agent, acquired_at, expires_at, ttl_ms, fencing_token, state, release_reason, released_at, valid_from, valid_to, lvl, node)
VALUES (:claim_id, :work, :session_id, :agent, :acquired_at, :expires_at, :ttl_ms, :fencing_token, :state, :release_reason, :released_at, :valid_from, :valid_to, :lvl, :node);
