SELECT seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash
FROM events
WHERE seq IN (
    SELECT seq FROM events WHERE stream = 'session/' || :session AND seq > :since AND seq <= :until
    UNION
    SELECT valid_from FROM p_claims WHERE session_id = :session AND valid_from > :since AND valid_from <= :until
    UNION
    SELECT valid_from FROM p_bindings WHERE session_id = :session AND valid_from > :since AND valid_from <= :until)
  AND (:kind IS NULL OR kind = :kind)
  AND (:work IS NULL OR seq IN (
    SELECT seq FROM events WHERE stream = 'work/' || :work AND seq > :since AND seq <= :until
    UNION
    SELECT seq FROM events WHERE stream IN (SELECT DISTINCT 'session/' || session_id FROM p_sessions WHERE work = :work) AND seq > :since AND seq <= :until
    UNION
    SELECT valid_from FROM p_bindings WHERE work = :work AND valid_from > :since AND valid_from <= :until))
ORDER BY seq LIMIT :limit + 0;
