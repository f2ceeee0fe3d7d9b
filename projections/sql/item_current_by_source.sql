SELECT key, ordinal, item FROM p_work_items WHERE source_path = :source_path AND valid_to IS NULL;
