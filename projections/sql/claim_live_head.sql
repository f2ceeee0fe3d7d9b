SELECT * FROM p_claims INDEXED BY p_claims_held WHERE state = 'held' AND valid_to IS NULL AND (expires_at = 0 OR expires_at > :now) ORDER BY work, fencing_token DESC;
