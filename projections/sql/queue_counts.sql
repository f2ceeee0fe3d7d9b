SELECT name, n FROM p_work_counts WHERE name NOT LIKE 'goal:%';
