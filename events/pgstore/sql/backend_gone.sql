SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = @pid) AS gone
