SELECT coalesce(max(version), 0) AS version FROM awr_schema_migrations
