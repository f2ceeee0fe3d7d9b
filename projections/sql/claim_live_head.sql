SELECT * FROM p_claims WHERE state = 'held' AND valid_to IS NULL AND (expires_at = 0 OR expires_at > :now) ORDER BY work, fencing_token DESC;
