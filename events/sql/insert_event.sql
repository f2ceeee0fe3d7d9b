INSERT OR FAIL INTO events (seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash)
VALUES (:seq, :id, :kind, :stream, :stream_version, :occurred_at, :actor, :request_id, :payload, :prev_hash, :hash);
