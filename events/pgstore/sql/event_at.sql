SELECT seq, hash, occurred_at FROM awr_events WHERE project = @project AND seq = @seq
