SELECT seq, hash, occurred_at, moved_to, coalesce(moved_at, 0) AS moved_at, (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS server_now FROM awr_heads WHERE project = @project FOR UPDATE
