SELECT id, title, body FROM p_search WHERE doc = :doc AND valid_to IS NULL;
