SELECT seq FROM events WHERE request_id = :request_id;
