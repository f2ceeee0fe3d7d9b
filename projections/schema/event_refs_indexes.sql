CREATE UNIQUE INDEX p_event_refs_key ON p_event_refs (ref, seq);
