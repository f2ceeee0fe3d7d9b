SELECT * FROM p_knowledge WHERE work = :work AND valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY kind, num, item_id;
