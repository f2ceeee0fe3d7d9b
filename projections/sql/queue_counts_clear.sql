DELETE FROM p_work_counts;
