SELECT fencing_token AS token FROM p_claims INDEXED BY p_claims_token WHERE work = :work AND valid_from <= :rev ORDER BY fencing_token DESC LIMIT 1;
