SELECT fingerprint, first_seq, result FROM awr_requests
WHERE project = @project AND request_id = @request_id
