SELECT key, source_path, ordinal, rank, queue, reason, organized, goal FROM p_work_queue;
