SELECT key FROM p_work_queue INDEXED BY p_work_queue_goal WHERE goal = :goal ORDER BY rank, key, source_path, ordinal LIMIT :limit + 0;
