SELECT * FROM p_claims WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY work, fencing_token;
