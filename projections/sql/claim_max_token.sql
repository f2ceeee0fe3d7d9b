SELECT COALESCE(MAX(fencing_token), 0) AS token FROM p_claims WHERE work = :work AND valid_from <= :rev;
