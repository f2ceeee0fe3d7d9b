SELECT key, rule FROM p_rules WHERE source_path = :source_path AND valid_to IS NULL;
