SELECT count(*) AS n, coalesce(sum(status = :completed), 0) AS done FROM p_work_items INDEXED BY p_work_items_goal
WHERE goal = :goal AND valid_to IS NULL;
