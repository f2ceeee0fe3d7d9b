DELETE FROM p_search_df WHERE (term = '' OR term IN (SELECT term FROM p_search_term WHERE id = :id)) AND n = 0;
