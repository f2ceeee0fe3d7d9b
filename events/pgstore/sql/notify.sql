SELECT pg_notify('awr_events', @project::text || ':' || (@seq::bigint)::text)
