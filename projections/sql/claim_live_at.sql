-- Claims held at :rev and unexpired at :now: open held versions created by
-- :rev, plus closed held versions containing :rev through the dyadic
-- interval index (see session_active_count_at.sql).
WITH RECURSIVE lv(l) AS (SELECT 0 UNION ALL SELECT l + 1 FROM lv WHERE l < 62)
SELECT claim_id, work, session_id, agent, acquired_at, expires_at, ttl_ms, fencing_token, state, release_reason, released_at, valid_from
FROM p_claims INDEXED BY p_claims_held_from WHERE state = 'held' AND valid_to IS NULL AND valid_from <= :rev AND (expires_at = 0 OR expires_at > :now)
UNION ALL
SELECT s.claim_id, s.work, s.session_id, s.agent, s.acquired_at, s.expires_at, s.ttl_ms, s.fencing_token, s.state, s.release_reason, s.released_at, s.valid_from
FROM lv JOIN p_claims s ON s.lvl = lv.l AND s.node = (:rev >> lv.l) AND s.state = 'held' AND s.valid_to IS NOT NULL AND s.valid_from <= :rev
WHERE (lv.l = 0 OR ((:rev >> (lv.l - 1)) & 1) = 0) AND (s.expires_at = 0 OR s.expires_at > :now)
UNION ALL
SELECT s.claim_id, s.work, s.session_id, s.agent, s.acquired_at, s.expires_at, s.ttl_ms, s.fencing_token, s.state, s.release_reason, s.released_at, s.valid_from
FROM lv JOIN p_claims s ON s.lvl = lv.l AND s.node = (:rev >> lv.l) AND s.state = 'held' AND s.valid_to IS NOT NULL AND s.valid_to > :rev
WHERE lv.l > 0 AND ((:rev >> (lv.l - 1)) & 1) = 1 AND (s.expires_at = 0 OR s.expires_at > :now)
ORDER BY work, fencing_token DESC;
