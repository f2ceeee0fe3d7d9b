UPDATE p_search_df SET n = n - 1 WHERE term = '' OR term IN (SELECT term FROM p_search_term WHERE id = :id);
