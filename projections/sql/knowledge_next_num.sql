SELECT coalesce((SELECT num FROM p_knowledge INDEXED BY p_knowledge_num WHERE work = :work AND substr(item_id, 1, 1) = :prefix AND valid_from <= :rev ORDER BY num DESC LIMIT 1), 0) AS num;
