INSERT INTO p_search_df (term, n) SELECT key, value FROM json_each(:counts) WHERE true
ON CONFLICT (term) DO UPDATE SET n = n + excluded.n;
