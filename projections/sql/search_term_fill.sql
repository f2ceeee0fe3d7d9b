INSERT INTO p_search_term (term, impact, id) SELECT j.key, j.value, d.id FROM p_search_term_doc AS d, json_each(d.impacts) AS j ORDER BY j.key, j.value DESC, d.id DESC;
