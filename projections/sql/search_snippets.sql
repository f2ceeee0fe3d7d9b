SELECT d.id, d.kind, d.ref, d.work, d.session_id, d.state, d.seq, d.title,
       snippet(p_search_fts, -1, '[', ']', '…', 12) AS snippet
FROM p_search_fts JOIN p_search d ON d.id = p_search_fts.rowid
WHERE p_search_fts MATCH :match AND p_search_fts.rowid IN (SELECT value FROM json_each(:ids));
