SELECT * FROM p_knowledge WHERE work = :work AND item_id = :item_id AND valid_to IS NULL;
