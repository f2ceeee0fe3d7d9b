INSERT INTO awr_events (project, seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash)
VALUES (@project, @seq, @id, @kind, @stream, @stream_version, @occurred_at, @actor, @request_id, @payload, @prev_hash, @hash)
