-- One queue's items at the head, in ready's order, after a place
-- (:rank -1 for the first page): the queue's index in order, each item's
-- current row by its partial index.
SELECT q.key, q.source_path, q.ordinal, q.rank, q.queue, q.reason, q.organized, w.item
FROM p_work_queue q INDEXED BY p_work_queue_order
JOIN p_work_items w INDEXED BY p_work_items_current
  ON w.source_path = q.source_path AND w.key = q.key AND w.ordinal = q.ordinal AND w.valid_to IS NULL
WHERE q.queue = :queue AND (q.rank, q.key, q.source_path, q.ordinal) > (:rank, :key, :source_path, :ordinal)
ORDER BY q.rank, q.key, q.source_path, q.ordinal;
