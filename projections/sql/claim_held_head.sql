SELECT * FROM p_claims WHERE state = 'held' AND valid_to IS NULL ORDER BY work, fencing_token DESC;
