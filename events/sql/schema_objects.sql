SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'index', 'trigger', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\';
