SELECT key, source_path, ordinal, status, goal, item FROM p_work_items INDEXED BY p_work_items_current WHERE valid_to IS NULL;
