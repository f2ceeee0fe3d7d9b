SELECT seq FROM awr_events WHERE project = @project AND request_id = @request_id
