INSERT INTO p_work_counts (name, n) VALUES (:name, :n);
