SELECT count(*) AS n FROM p_knowledge INDEXED BY p_knowledge_live WHERE work = :work AND valid_to IS NULL AND closed_seq = 0;
