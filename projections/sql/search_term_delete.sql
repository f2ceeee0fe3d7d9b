DELETE FROM p_search_term WHERE id = :id;
