SELECT * FROM p_knowledge INDEXED BY p_knowledge_live WHERE work = :work AND kind = :kind AND valid_to IS NULL AND closed_seq = 0 AND num >= :num AND (num > :num OR item_id > :id) AND valid_from <= :rev
UNION ALL
SELECT * FROM p_knowledge INDEXED BY p_knowledge_ended WHERE work = :work AND valid_to IS NOT NULL AND closed_seq = 0 AND valid_to > :rev AND valid_from <= :rev AND kind = :kind AND num >= :num AND (num > :num OR item_id > :id)
ORDER BY num, item_id LIMIT :limit + 0;
