UPDATE awr_heads SET moved_to = coalesce(moved_to, @moved_to), moved_at = coalesce(moved_at, @moved_at)
WHERE project = @project
