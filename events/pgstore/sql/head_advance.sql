UPDATE awr_heads SET seq = @seq, hash = @hash, occurred_at = @occurred_at
WHERE project = @project AND seq = @start_seq
