SELECT d.id, length(d.title) AS title_len, length(d.body) AS body_len, z.sz
FROM p_search_fts JOIN p_search d ON d.id = p_search_fts.rowid JOIN p_search_fts_docsize z ON z.id = d.id
WHERE p_search_fts MATCH :query
  AND d.valid_from <= :rev AND (d.valid_to IS NULL OR d.valid_to > :rev)
  AND (:kind = '' OR d.kind = :kind);
