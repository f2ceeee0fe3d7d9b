SELECT coalesce(max(num), 0) AS num FROM p_knowledge WHERE work = :work AND substr(item_id, 1, 1) = :prefix AND valid_from <= :rev;
