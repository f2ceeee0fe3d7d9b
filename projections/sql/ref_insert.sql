INSERT INTO p_event_refs (seq, ref) VALUES (:seq, :ref);
