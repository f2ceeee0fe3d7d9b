UPDATE p_knowledge SET valid_to = :seq WHERE work = :work AND item_id = :item_id AND valid_to IS NULL;
