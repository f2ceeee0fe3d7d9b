SELECT request_id, fingerprint, first_seq, last_seq, result FROM requests ORDER BY first_seq, request_id;
