SELECT key, source_path, rule FROM p_rules WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY key, source_path;
