SELECT key, ordinal, item, valid_from FROM p_work_items WHERE valid_from BETWEEN :from AND :to AND source_path = :path AND (valid_to IS NULL OR valid_to > :to) ORDER BY valid_from LIMIT :limit + 0;
