SELECT j.value AS impact FROM p_search_term_doc AS d, json_each(d.impacts) AS j WHERE d.id = :id AND j.key = :term;
