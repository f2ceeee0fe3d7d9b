SELECT fingerprint, first_seq, last_seq, result FROM requests WHERE request_id = :request_id;
