SELECT n FROM p_search_df WHERE term = :term;
