INSERT INTO p_search_df (term, n)
SELECT '', count(*) FROM p_search WHERE kind = 'work' AND valid_to IS NULL HAVING count(*) > 0
UNION ALL SELECT term, count(*) FROM p_search_term GROUP BY term;
