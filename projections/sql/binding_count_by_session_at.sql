SELECT count(*) AS n FROM p_bindings WHERE session_id = :session_id AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
