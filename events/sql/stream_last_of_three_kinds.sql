SELECT * FROM (SELECT seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash
  FROM events WHERE stream = :stream AND kind = :kind_a ORDER BY seq DESC LIMIT 1)
UNION ALL
SELECT * FROM (SELECT seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash
  FROM events WHERE stream = :stream AND kind = :kind_b ORDER BY seq DESC LIMIT 1)
UNION ALL
SELECT * FROM (SELECT seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash
  FROM events WHERE stream = :stream AND kind = :kind_c ORDER BY seq DESC LIMIT 1);
