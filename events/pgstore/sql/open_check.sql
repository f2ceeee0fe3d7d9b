SELECT (SELECT coalesce(max(version), 0) FROM awr_schema_migrations) AS version,
       EXISTS (SELECT 1 FROM awr_heads WHERE project = @project) AS head
