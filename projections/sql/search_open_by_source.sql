SELECT doc FROM p_search WHERE source = :source AND source != '' AND valid_to IS NULL ORDER BY doc;
