SELECT id, impact FROM p_search_term WHERE term = :term ORDER BY impact DESC, id DESC;
