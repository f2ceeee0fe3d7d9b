DELETE FROM p_search_term_doc WHERE id = :id;
