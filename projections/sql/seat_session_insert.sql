INSERT INTO p_seat_sessions (session_id, address, seq) VALUES (:session_id, :address, :seq);
