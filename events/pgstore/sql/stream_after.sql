SELECT seq, kind, stream FROM awr_events
WHERE project = @project AND stream = @stream AND seq > @after AND seq <= @actual
ORDER BY seq
