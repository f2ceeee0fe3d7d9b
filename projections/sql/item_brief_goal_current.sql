SELECT key, source_path, ordinal, status, goal FROM p_work_items INDEXED BY p_work_items_goal WHERE goal = :goal AND valid_to IS NULL;
