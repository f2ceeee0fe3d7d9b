SELECT * FROM p_bindings WHERE external_session = :external_session AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
