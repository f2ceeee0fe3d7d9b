SELECT (SELECT coalesce(max(version), 0) FROM awr_schema_migrations) AS version,
       h.seq, h.hash, h.occurred_at
FROM (SELECT 1) AS one LEFT JOIN awr_heads h ON h.project = @project
