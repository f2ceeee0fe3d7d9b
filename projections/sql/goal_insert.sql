INSERT INTO p_goals (key, source_path, title, status, goal, valid_from, valid_to)
VALUES (:key, :source_path, :title, :status, :goal, :valid_from, :valid_to);
