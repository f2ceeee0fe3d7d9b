SELECT e.seq, e.id, e.kind, e.stream, e.stream_version, e.occurred_at, e.actor, e.request_id, e.payload, e.prev_hash, e.hash
FROM p_work_log w JOIN events e ON e.seq = w.seq
WHERE w.work = :work AND w.seq <= :rev AND (:kind IS NULL OR w.kind = :kind)
ORDER BY w.seq DESC LIMIT :limit + 0;
