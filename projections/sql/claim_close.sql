UPDATE p_claims SET valid_to = :seq WHERE claim_id = :claim_id AND valid_to IS NULL;
