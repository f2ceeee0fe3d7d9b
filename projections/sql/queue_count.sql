SELECT n FROM p_work_counts WHERE name = :name;
