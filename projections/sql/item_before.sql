SELECT item FROM p_work_items WHERE key = :key AND source_path = :path AND ordinal = :ordinal AND valid_from < :from AND (valid_to IS NULL OR valid_to >= :from) ORDER BY valid_from DESC LIMIT 1;
