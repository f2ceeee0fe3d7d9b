CREATE INDEX p_knowledge_open ON p_knowledge (work, item_id) WHERE valid_to IS NULL;
CREATE INDEX p_knowledge_from ON p_knowledge (work, valid_from);
