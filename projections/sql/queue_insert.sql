INSERT INTO p_work_queue (key, source_path, ordinal, rank, queue, reason, organized, goal)
VALUES (:key, :source_path, :ordinal, :rank, :queue, :reason, :organized, :goal);
