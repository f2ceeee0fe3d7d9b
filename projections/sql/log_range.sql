SELECT seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash
FROM events
WHERE seq > :since AND seq <= :until AND (:kind IS NULL OR kind = :kind)
ORDER BY seq LIMIT :limit + 0;
