SELECT item_count FROM p_sources WHERE path = :path AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
