INSERT INTO p_search (doc, kind, ref, work, session_id, source, state, seq, title, body, valid_from, valid_to)
VALUES (:doc, :kind, :ref, :work, :session_id, :source, :state, :seq, :title, :body, :valid_from, :valid_to);
