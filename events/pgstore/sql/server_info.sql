SELECT current_setting('server_version') AS version, (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS server_now
