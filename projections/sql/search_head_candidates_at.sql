SELECT d.id, length(d.title) AS title_len, length(d.body) AS body_len, z.sz
FROM p_search_head_fts JOIN p_search d ON d.id = p_search_head_fts.rowid JOIN p_search_head_fts_docsize z ON z.id = d.id
WHERE p_search_head_fts MATCH :query
  AND d.valid_from <= :rev
  AND (:kind = '' OR d.kind = :kind);
