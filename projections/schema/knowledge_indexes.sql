CREATE UNIQUE INDEX p_knowledge_key ON p_knowledge (work, item_id, valid_from);
CREATE INDEX p_knowledge_open ON p_knowledge (work, item_id) WHERE valid_to IS NULL;
CREATE INDEX p_knowledge_from ON p_knowledge (work, valid_from);
CREATE INDEX p_knowledge_live ON p_knowledge (work, kind, num) WHERE valid_to IS NULL AND closed_seq = 0;
CREATE INDEX p_knowledge_ended ON p_knowledge (work, valid_to) WHERE valid_to IS NOT NULL AND closed_seq = 0;
CREATE INDEX p_knowledge_num ON p_knowledge (work, substr(item_id, 1, 1), num);
