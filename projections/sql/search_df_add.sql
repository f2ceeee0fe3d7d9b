INSERT INTO p_search_df (term, n) SELECT '', 1 UNION ALL SELECT key, 1 FROM json_each(:impacts) WHERE true
ON CONFLICT (term) DO UPDATE SET n = n + 1;
