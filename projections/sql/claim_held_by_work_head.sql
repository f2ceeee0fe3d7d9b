SELECT * FROM p_claims INDEXED BY p_claims_held_work WHERE work = :work AND state = 'held' AND valid_to IS NULL ORDER BY fencing_token DESC;
