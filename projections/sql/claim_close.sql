UPDATE p_claims SET valid_to = :seq, lvl = :lvl, node = :node WHERE claim_id = :claim_id AND valid_to IS NULL;
