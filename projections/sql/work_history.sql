SELECT e.seq, e.id, e.kind, e.stream, e.stream_version, e.occurred_at, e.actor, e.request_id, e.payload, e.prev_hash, e.hash
FROM events e
WHERE e.seq IN (
  SELECT w.seq FROM p_work_log w WHERE w.work = :work AND w.seq > :since AND w.seq <= :rev
  UNION
  SELECT i.valid_from FROM p_work_items i WHERE i.key = :work AND i.valid_from > :since AND i.valid_from <= :rev
  UNION
  SELECT i.valid_to FROM p_work_items i WHERE i.key = :work AND i.valid_to > :since AND i.valid_to <= :rev
)
AND (:kinds IS NULL OR e.kind IN (SELECT value FROM json_each(:kinds)))
ORDER BY e.seq LIMIT :limit + 0;
