SELECT seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash
FROM awr_events
WHERE project = @project AND seq >= @from AND seq <= @to
ORDER BY seq
LIMIT @limit
