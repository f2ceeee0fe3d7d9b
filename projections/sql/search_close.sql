UPDATE p_search SET valid_to = :seq WHERE doc = :doc AND valid_to IS NULL;
