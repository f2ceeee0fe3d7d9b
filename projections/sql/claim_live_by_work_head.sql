-- The current held claims on :work whose lease has not expired at :now
-- (or has none). Searching the two ranges of the work item's entries in
-- p_claims_held_work reads only its unexpired claims, however many
-- lapsed leases its history left held, and none of other items.
SELECT * FROM p_claims INDEXED BY p_claims_held_work WHERE work = :work AND expires_at > :now AND state = 'held' AND valid_to IS NULL
UNION ALL
SELECT * FROM p_claims INDEXED BY p_claims_held_work WHERE work = :work AND expires_at = 0 AND state = 'held' AND valid_to IS NULL
ORDER BY fencing_token DESC;
