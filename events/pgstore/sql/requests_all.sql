SELECT request_id, fingerprint, first_seq, last_seq, result FROM awr_requests
WHERE project = @project
ORDER BY first_seq, request_id
