UPDATE p_goals SET valid_to = :seq WHERE source_path = :source_path AND key = :key AND valid_to IS NULL;
