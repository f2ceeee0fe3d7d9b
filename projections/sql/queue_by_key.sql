SELECT q.key, q.source_path, q.ordinal, q.rank, q.queue, q.reason, q.organized, w.item
FROM p_work_queue q
JOIN p_work_items w INDEXED BY p_work_items_current
  ON w.source_path = q.source_path AND w.key = q.key AND w.ordinal = q.ordinal AND w.valid_to IS NULL
WHERE q.key = :key
ORDER BY q.source_path, q.ordinal;
