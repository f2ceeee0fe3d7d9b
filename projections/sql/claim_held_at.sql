SELECT * FROM p_claims WHERE state = 'held' AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY work, fencing_token DESC;
