DELETE FROM p_search_term WHERE (term, impact, id) IN (SELECT j.key, j.value, d.id FROM p_search_term_doc AS d, json_each(d.impacts) AS j WHERE d.id = :id);
