INSERT INTO p_checkpoints (checkpoint_id, seq, session_id, work, agent, context_hash, context_hash_verified, digest, next_action, open_loops, recorded_at)
VALUES (:checkpoint_id, :seq, :session_id, :work, :agent, :context_hash, :context_hash_verified, :digest, :next_action, :open_loops, :recorded_at);
