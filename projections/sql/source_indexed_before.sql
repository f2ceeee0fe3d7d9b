SELECT valid_from FROM p_sources WHERE path = :path AND valid_from < :seq ORDER BY valid_from DESC LIMIT 1;
