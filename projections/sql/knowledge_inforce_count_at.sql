SELECT (SELECT count(*) FROM p_knowledge INDEXED BY p_knowledge_live WHERE work = :work AND valid_to IS NULL AND closed_seq = 0 AND valid_from <= :rev)
     + (SELECT count(*) FROM p_knowledge INDEXED BY p_knowledge_ended WHERE work = :work AND valid_to IS NOT NULL AND closed_seq = 0 AND valid_to > :rev AND valid_from <= :rev) AS n;
