SELECT impact FROM p_search_term WHERE id = :id AND term = :term;
