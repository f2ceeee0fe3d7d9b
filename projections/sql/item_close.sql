UPDATE p_work_items SET valid_to = :seq WHERE source_path = :source_path AND key = :key AND ordinal = :ordinal AND valid_to IS NULL;
