INSERT INTO p_search (id, doc, kind, ref, work, session_id, source, state, seq, title, body, valid_from, valid_to)
VALUES (:id, :doc, :kind, :ref, :work, :session_id, :source, :state, :seq, :title, :body, :valid_from, :valid_to);
