INSERT INTO p_bindings (external_session, client, session_id, work, checkpoint_id, bound_at, valid_from, valid_to)
VALUES (:external_session, :client, :session_id, :work, :checkpoint_id, :bound_at, :valid_from, :valid_to);
