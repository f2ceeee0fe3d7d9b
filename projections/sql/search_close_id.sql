UPDATE p_search SET valid_to = :seq WHERE id = :id;
