INSERT INTO p_search_term (term, impact, id)
SELECT j.key, j.value, d.id FROM json_each(:ids) AS x JOIN p_search_term_doc AS d ON d.id = x.value, json_each(d.impacts) AS j
ORDER BY j.key, j.value DESC, d.id DESC;
