SELECT * FROM p_claims WHERE claim_id = :claim_id AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
