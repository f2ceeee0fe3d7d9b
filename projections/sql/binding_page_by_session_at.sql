SELECT * FROM p_bindings WHERE session_id = :session_id AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) AND external_session > :after ORDER BY external_session LIMIT :limit + 0;
