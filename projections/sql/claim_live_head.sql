-- The current held claims whose lease has not expired at :now (or has
-- none). Two ranges of p_claims_held (an OR of them would scan every held
-- claim, and lapsed leases stay held until released): the read follows
-- the live claims, not the lapsed ones history left behind.
SELECT * FROM p_claims INDEXED BY p_claims_held WHERE expires_at > :now AND expires_at <> 0 AND state = 'held' AND valid_to IS NULL
UNION ALL
SELECT * FROM p_claims INDEXED BY p_claims_held WHERE expires_at = 0 AND state = 'held' AND valid_to IS NULL
ORDER BY work, fencing_token DESC;
