SELECT count(*) AS n FROM sqlite_schema;
