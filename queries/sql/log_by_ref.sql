SELECT e.seq, e.id, e.kind, e.stream, e.stream_version, e.occurred_at, e.actor, e.request_id, e.payload, e.prev_hash, e.hash
FROM p_event_refs r JOIN events e ON e.seq = r.seq
WHERE r.ref = :ref AND r.seq > :since AND r.seq <= :until AND (:kind IS NULL OR e.kind = :kind)
ORDER BY r.seq LIMIT :limit;
