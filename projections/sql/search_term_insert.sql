INSERT INTO p_search_term (id, term, impact)
SELECT :id, key, value FROM json_each(:impacts);
