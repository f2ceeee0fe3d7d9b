SELECT * FROM p_bindings WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY external_session;
