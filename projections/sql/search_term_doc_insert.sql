INSERT INTO p_search_term_doc (id, impacts) VALUES (:id, :impacts);
