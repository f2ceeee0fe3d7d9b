SELECT min(seq) AS seq FROM (
  SELECT valid_from AS seq FROM p_work_items WHERE key = :key AND valid_from > :from AND valid_from <= :rev
  UNION ALL
  SELECT valid_to AS seq FROM p_work_items WHERE key = :key AND valid_to > :from AND valid_to <= :rev
);
