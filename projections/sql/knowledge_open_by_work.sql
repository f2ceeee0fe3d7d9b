SELECT * FROM p_knowledge WHERE work = :work AND valid_to IS NULL ORDER BY kind, num, item_id;
