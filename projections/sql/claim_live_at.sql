SELECT * FROM p_claims WHERE state = 'held' AND (expires_at = 0 OR expires_at > :now) AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY work, fencing_token DESC;
