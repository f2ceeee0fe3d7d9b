INSERT INTO awr_schema_migrations (version) VALUES (@version)
