INSERT INTO p_rules (key, source_path, strength, rule, valid_from, valid_to)
VALUES (:key, :source_path, :strength, :rule, :valid_from, :valid_to);
