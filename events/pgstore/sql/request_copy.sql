INSERT INTO awr_requests (project, request_id, fingerprint, first_seq, last_seq, result)
VALUES (@project, @request_id, @fingerprint, @first_seq, @last_seq, @result)
ON CONFLICT (project, request_id) DO NOTHING
