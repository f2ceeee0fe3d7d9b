INSERT INTO awr_heads (project, seq, hash, occurred_at)
VALUES (@project, 0, @zero_hash, 0)
ON CONFLICT (project) DO NOTHING
