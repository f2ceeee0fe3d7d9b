SELECT rowid AS id, snippet(p_search_head_fts, -1, '[', ']', '…', 12) AS snippet
FROM p_search_head_fts
WHERE p_search_head_fts MATCH :query AND rowid IN (SELECT value FROM json_each(:ids));
