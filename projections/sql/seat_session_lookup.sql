SELECT address FROM p_seat_sessions WHERE session_id = :session_id;
