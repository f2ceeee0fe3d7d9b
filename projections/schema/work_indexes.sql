CREATE UNIQUE INDEX p_rules_key ON p_rules (key, source_path, valid_from);
CREATE UNIQUE INDEX p_goals_key ON p_goals (key, source_path, valid_from);
CREATE UNIQUE INDEX p_work_items_key ON p_work_items (key, source_path, ordinal, valid_from);
CREATE UNIQUE INDEX p_sources_key ON p_sources (path, valid_from);
CREATE UNIQUE INDEX p_sources_current ON p_sources (path) WHERE valid_to IS NULL;
CREATE INDEX p_sources_from ON p_sources (valid_from);
CREATE UNIQUE INDEX p_work_items_current ON p_work_items (source_path, key, ordinal) WHERE valid_to IS NULL;
CREATE INDEX p_work_items_from ON p_work_items (valid_from);
CREATE UNIQUE INDEX p_goals_current ON p_goals (source_path, key) WHERE valid_to IS NULL;
CREATE UNIQUE INDEX p_rules_current ON p_rules (source_path, key) WHERE valid_to IS NULL;
CREATE INDEX p_work_queue_order ON p_work_queue (queue, rank, key, source_path, ordinal);
CREATE INDEX p_work_queue_goal ON p_work_queue (goal, rank, key, source_path, ordinal);
-- A context packet's related work at the head: the current items of one
-- goal, and of one milestone (a field of the item's JSON alone), found
-- without stepping through the register, and without reading the rows:
-- each index holds every column a brief reads (RelatedBriefsHead).
CREATE INDEX p_work_items_goal ON p_work_items (goal, status, key, source_path, ordinal, valid_to) WHERE valid_to IS NULL;
CREATE INDEX p_work_items_milestone ON p_work_items (json_extract(item, '$.milestone'), goal, status, key, source_path, ordinal, valid_to) WHERE valid_to IS NULL;
