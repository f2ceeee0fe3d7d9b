SELECT seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash
FROM events WHERE stream = :stream AND kind = :kind ORDER BY seq DESC LIMIT :limit + 0;
