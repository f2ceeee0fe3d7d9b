SELECT count(*) AS n FROM sqlite_schema WHERE type = 'trigger' AND name IN ('events_no_update', 'events_no_delete', 'events_seq_gapless');
