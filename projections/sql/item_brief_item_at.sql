SELECT key, source_path, ordinal, status, goal, item FROM p_work_items WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev);
