SELECT key, goal FROM p_goals WHERE source_path = :source_path AND valid_to IS NULL;
