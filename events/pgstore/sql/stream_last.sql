SELECT stream_version FROM awr_events
WHERE project = @project AND stream = @stream
ORDER BY stream_version DESC
LIMIT 1
