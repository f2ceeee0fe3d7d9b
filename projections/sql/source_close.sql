UPDATE p_sources SET valid_to = :seq WHERE path = :path AND valid_to IS NULL;
