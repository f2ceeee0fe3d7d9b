CREATE UNIQUE INDEX p_search_key ON p_search (doc, valid_from);
CREATE INDEX p_search_source ON p_search (source) WHERE valid_to IS NULL AND source != '';
