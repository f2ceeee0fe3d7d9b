INSERT INTO p_work_items (key, source_path, ordinal, title, status, priority, goal, item, valid_from, valid_to)
VALUES (:key, :source_path, :ordinal, :title, :status, :priority, :goal, :item, :valid_from, :valid_to);
