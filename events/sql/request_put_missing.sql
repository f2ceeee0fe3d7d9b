INSERT OR IGNORE INTO requests (request_id, fingerprint, first_seq, last_seq, result)
VALUES (:request_id, :fingerprint, :first_seq, :last_seq, :result);
