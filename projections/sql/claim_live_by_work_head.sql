-- The current held claims on :work whose lease has not expired at :now
-- (or has none). Searching the two ranges of p_claims_held reads only
-- unexpired claims, however many lapsed leases the item's history left
-- held.
SELECT * FROM p_claims INDEXED BY p_claims_held WHERE expires_at > :now AND state = 'held' AND valid_to IS NULL AND work = :work
UNION ALL
SELECT * FROM p_claims INDEXED BY p_claims_held WHERE expires_at = 0 AND state = 'held' AND valid_to IS NULL AND work = :work
ORDER BY fencing_token DESC;
