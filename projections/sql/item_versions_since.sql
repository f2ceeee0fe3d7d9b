SELECT key, source_path, item, valid_from FROM p_work_items WHERE key = :key AND valid_from > :from AND valid_from <= :rev ORDER BY valid_from, source_path, ordinal;
