SELECT key, source_path, ordinal, status, goal FROM p_work_items INDEXED BY p_work_items_milestone
WHERE json_extract(item, '$.milestone') = :milestone AND (:goal = '' OR goal != :goal) AND valid_to IS NULL;
