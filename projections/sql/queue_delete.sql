DELETE FROM p_work_queue WHERE key = :key AND source_path = :source_path AND ordinal = :ordinal;
