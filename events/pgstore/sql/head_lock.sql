SELECT seq, hash, occurred_at FROM awr_heads WHERE project = @project FOR UPDATE
