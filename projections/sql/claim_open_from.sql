SELECT valid_from FROM p_claims WHERE claim_id = :claim_id AND valid_to IS NULL;
