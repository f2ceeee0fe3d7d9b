-- Two steps, so that a page costs what it returns: the matches visible
-- at :rev are ranked and cut to :limit first (BM25 only, no text read
-- for a snippet), then only the page's rows are read whole and given a
-- snippet (the full-text query again, on one row id each).
WITH page AS MATERIALIZED (
  SELECT d.id AS id, bm25(p_search_fts, 2.0, 1.0) AS bm25, d.seq AS seq, d.doc AS doc
  FROM p_search_fts JOIN p_search d ON d.id = p_search_fts.rowid
  WHERE p_search_fts MATCH :query
    AND d.valid_from <= :rev AND (d.valid_to IS NULL OR d.valid_to > :rev)
    AND (:kind = '' OR d.kind = :kind)
  ORDER BY bm25, d.seq DESC, d.doc
  LIMIT :limit
)
SELECT d.kind, d.ref, d.work, d.session_id, d.state, d.seq, d.title,
       (SELECT snippet(p_search_fts, -1, '[', ']', '…', 12) FROM p_search_fts
        WHERE p_search_fts MATCH :query AND p_search_fts.rowid = page.id) AS snippet,
       page.bm25 AS bm25
FROM page JOIN p_search d ON d.id = page.id
ORDER BY page.bm25, page.seq DESC, page.doc;
