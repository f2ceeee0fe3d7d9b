SELECT key, ordinal, item, valid_from FROM p_work_items WHERE source_path = :path AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY key, ordinal;
