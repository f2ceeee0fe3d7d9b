UPDATE p_search_df SET n = n - 1 WHERE term = '' OR term IN (SELECT j.key FROM p_search_term_doc AS d, json_each(d.impacts) AS j WHERE d.id = :id);
