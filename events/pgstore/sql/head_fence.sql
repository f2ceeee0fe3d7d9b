SELECT seq, hash, occurred_at, moved_to, coalesce(moved_at, 0) AS moved_at FROM awr_heads WHERE project = @project
