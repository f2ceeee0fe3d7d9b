SELECT d.doc, d.kind, d.ref, d.work, d.session_id, d.state, d.seq, d.title,
       snippet(p_search_head_fts, -1, '[', ']', '…', 12) AS snippet,
       bm25(p_search_head_fts, 2.0, 1.0) AS bm25
FROM p_search_head_fts JOIN p_search d ON d.id = p_search_head_fts.rowid
WHERE p_search_head_fts MATCH :query
  AND d.valid_from <= :rev
  AND (:kind = '' OR d.kind = :kind)
ORDER BY bm25, d.seq DESC, d.doc
LIMIT :limit + 0;
