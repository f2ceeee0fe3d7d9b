SELECT term, sum(iif(col = 'title', 2, 1)) AS f, count(*) AS c FROM p_search_tok_v GROUP BY term ORDER BY term;
