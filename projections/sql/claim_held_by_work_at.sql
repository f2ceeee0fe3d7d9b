SELECT * FROM p_claims WHERE work = :work AND state = 'held' AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY fencing_token DESC;
