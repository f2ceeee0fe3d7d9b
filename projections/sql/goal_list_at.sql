SELECT key, source_path, goal FROM p_goals WHERE valid_from <= :rev AND (valid_to IS NULL OR valid_to > :rev) ORDER BY key, source_path;
