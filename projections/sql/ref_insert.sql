INSERT OR IGNORE INTO p_event_refs (ref, seq) VALUES (:ref, :seq);
