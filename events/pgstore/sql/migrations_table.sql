CREATE TABLE IF NOT EXISTS awr_schema_migrations (
	version    integer     PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
)
