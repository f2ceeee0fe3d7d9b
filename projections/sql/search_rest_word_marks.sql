SELECT rowid AS id, length(highlight(p_search_fts, 0, char(1), char(2))) AS title_len,
       length(highlight(p_search_fts, 1, char(1), char(2))) AS body_len
FROM p_search_fts
WHERE p_search_fts MATCH :query AND rowid IN (SELECT value FROM json_each(:ids));
